// The locks of the hardened store (store.ts): operations on one object's name are serialized, so that a conditional
// request's check and its action are atomic, as on S3.

export const objectName = (bucket: string, key: string): string => `${bucket}/${key}`;

/**
 * Serializes work on the same names. What a flow already holds is handed to it explicitly (`with` gives `work` the
 * names it now holds, to pass to the nested calls it makes), so that a guarded request can call guarded store methods
 * without waiting on itself. Explicit rather than an AsyncLocalStorage: in Node 20 that turns on promise hooks for
 * every promise of the process (the API's, the ingest's, the SDK's), ~10 % of the stack's allocations
 * (docs/design.md §9).
 */
export class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async with<T>(
    names: readonly string[],
    work: (held: ReadonlySet<string>) => Promise<T>,
    mine: ReadonlySet<string> = NONE_HELD,
  ): Promise<T> {
    // Always in sorted order, so that two requests locking the same two names cannot wait on each other.
    const needed = [...new Set(names)].filter((n) => !mine.has(n)).sort();
    if (needed.length === 0) return work(mine);
    const releases: (() => void)[] = [];
    try {
      for (const name of needed) releases.push(await this.acquire(name));
      return await work(new Set([...mine, ...needed]));
    } finally {
      for (const release of releases) release();
    }
  }

  /** Names waited on or held (a bound: each is dropped when its last holder releases it). */
  get size(): number {
    return this.tails.size;
  }

  private async acquire(name: string): Promise<() => void> {
    const previous = this.tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(name, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(name) === tail) this.tails.delete(name);
    };
  }
}

export const NONE_HELD: ReadonlySet<string> = new Set();
