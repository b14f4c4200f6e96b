// The local queue's fair share (docs/design.md §11), the rule of an SQS fair queue: messages wait per message group
// (the client); a group holding a disproportionate share of the messages in flight is noisy, and while any quiet
// group has a message waiting, the quiet groups' messages go first (oldest first). Among noisy groups, the one with
// the fewest messages in flight goes first. A message without a group is a group of its own, as on SQS.

/** When a group counts as noisy: more than `share` of the messages in flight, and at least `minInFlight` of them. */
export interface FairShareRule {
  share: number;
  minInFlight: number;
}

/**
 * The local stack's rule: a group holding most of the in-flight work is noisy. Locally a few batches are in flight
 * (tens of messages), so SQS's own thresholds (below) would never mark anyone.
 */
export const LOCAL_FAIR_SHARE: FairShareRule = { share: 0.5, minInFlight: 1 };

/** SQS's documented, approximate thresholds: more than 10 % of the queue's in-flight messages and at least 30 of its own. */
export const SQS_FAIR_SHARE: FairShareRule = { share: 0.1, minInFlight: 30 };

/**
 * The detector pool's rule, measured in worker time (SQS's other measure of a noisy group: its share of the consumers'
 * processing time): a client that used more than half of the workers' recent time is noisy. Counted in images
 * pending instead, a quiet client's batch that has all its images waiting at once would count as noisy beside a busy
 * one with fewer waiting, and wait behind it.
 */
export const POOL_FAIR_SHARE: FairShareRule = { share: 0.5, minInFlight: 1 };

/**
 * Worker milliseconds per client, decaying by half every `halfLifeMs` (recent use weighs most): each image's time is
 * added when it ends, and the time an image now in a worker has run so far is counted as used.
 */
export class RecentUse {
  private readonly used = new Map<string, { ms: number; at: number }>();
  private readonly running = new Map<object, { client: string; since: number }>();

  constructor(private readonly halfLifeMs = 5_000) {}

  /** An image of `client` starts in a worker (`token` names it until it ends). */
  start(token: object, client: string, now: number): void {
    this.running.set(token, { client, since: now });
  }

  /** The image named by `token` left its worker: its time is the client's. */
  end(token: object, now: number): void {
    const run = this.running.get(token);
    if (!run) return;
    this.running.delete(token);
    this.add(run.client, now - run.since, now);
  }

  add(client: string, ms: number, now: number): void {
    this.used.set(client, { ms: this.decayed(client, now) + ms, at: now });
  }

  /** The client's recent worker time, its images running now included. */
  of(client: string, now: number): number {
    let ms = this.decayed(client, now);
    for (const run of this.running.values()) if (run.client === client) ms += now - run.since;
    return ms;
  }

  /** Every client's recent worker time, whole milliseconds (those forgotten left out). */
  snapshot(now: number): Record<string, number> {
    const clients = new Set([...this.used.keys(), ...[...this.running.values()].map((run) => run.client)]);
    const out: Record<string, number> = {};
    for (const client of clients) {
      const ms = Math.round(this.of(client, now));
      if (ms > 0) out[client] = ms;
    }
    return out;
  }

  total(now: number): number {
    let ms = 0;
    for (const client of this.used.keys()) ms += this.decayed(client, now);
    for (const run of this.running.values()) ms += now - run.since;
    return ms;
  }

  private decayed(client: string, now: number): number {
    const entry = this.used.get(client);
    if (!entry) return 0;
    const ms = entry.ms * 2 ** (-(now - entry.at) / this.halfLifeMs);
    // Forgotten once negligible, so that clients seen once do not accumulate.
    if (ms < 1) {
      this.used.delete(client);
      return 0;
    }
    return ms;
  }
}

export interface Waiting {
  groupId?: string;
  /** Epoch ms since when it is waiting (the batching window counts from the oldest). */
  availableAt: number;
}

/** The ready messages of a queue, by group, handed out by the fair-share rule (or in arrival order without one). */
export class FairReadyList<M extends Waiting> {
  /** Per group, its waiting messages in arrival order, each with its arrival number. */
  private readonly groups = new Map<string, { seq: number; message: M }[]>();
  private seq = 0;
  /** Arrival numbers of messages put back at the front (unshift): below every other. */
  private frontSeq = 0;
  private count = 0;

  constructor(private readonly rule: FairShareRule | false) {}

  get length(): number {
    return this.count;
  }

  /** How many groups have messages waiting. */
  get groupCount(): number {
    return this.groups.size;
  }

  push(message: M): void {
    this.seq += 1;
    // No group: a tenant of its own (a key SQS never repeats).
    const group = message.groupId ?? `\u0000${this.seq}`;
    const waiting = this.groups.get(group);
    if (waiting) waiting.push({ seq: this.seq, message });
    else this.groups.set(group, [{ seq: this.seq, message }]);
    this.count += 1;
  }

  /** Puts a message back first in line (e.g. a task whose worker died). */
  unshift(message: M): void {
    this.frontSeq -= 1;
    const group = message.groupId ?? `\u0000${this.frontSeq}`;
    const waiting = this.groups.get(group);
    if (waiting) waiting.unshift({ seq: this.frontSeq, message });
    else this.groups.set(group, [{ seq: this.frontSeq, message }]);
    this.count += 1;
  }

  /** Takes every waiting message out, oldest first (e.g. to fail them all). */
  drain(): M[] {
    const all = [...this.groups.values()].flat().sort((a, b) => a.seq - b.seq);
    this.clear();
    return all.map((w) => w.message);
  }

  /** The message waiting longest (first in), whatever its group. */
  oldest(): M | undefined {
    let best: { seq: number; message: M } | undefined;
    for (const waiting of this.groups.values()) {
      const head = waiting[0];
      if (head && (!best || head.seq < best.seq)) best = head;
    }
    return best?.message;
  }

  /**
   * Takes up to `n` messages for one batch. Each pick counts as in flight for the next one, so a quiet group's backlog
   * fills a batch only while it stays quiet. `inFlight(group)` and `totalInFlight` are the queue's before this batch.
   */
  take(n: number, inFlight: (groupId: string) => number, totalInFlight: number, opts: { quietOnly?: boolean } = {}): M[] {
    const taken: M[] = [];
    const picked = new Map<string, number>();
    // Only the groups quiet as the batch starts, when asked: the batch beside the full slots is theirs alone.
    const allowed = opts.quietOnly ? new Set(this.quietGroups(inFlight, totalInFlight)) : undefined;
    while (taken.length < n && this.count > 0) {
      const total = totalInFlight + taken.length;
      let best: { group: string; seq: number; noisy: boolean; flying: number } | undefined;
      for (const [group, waiting] of this.groups) {
        if (allowed && !allowed.has(group)) continue;
        const head = waiting[0] as { seq: number };
        const flying = inFlight(group) + (picked.get(group) ?? 0);
        const noisy = this.rule !== false && flying >= this.rule.minInFlight && flying > this.rule.share * total;
        const candidate = { group, seq: head.seq, noisy, flying };
        if (!best || goesBefore(candidate, best, this.rule !== false)) best = candidate;
      }
      if (!best) break;
      const chosen = best;
      const waiting = this.groups.get(chosen.group) as { seq: number; message: M }[];
      taken.push((waiting.shift() as { message: M }).message);
      if (waiting.length === 0) this.groups.delete(chosen.group);
      picked.set(chosen.group, (picked.get(chosen.group) ?? 0) + 1);
      this.count -= 1;
    }
    return taken;
  }

  /**
   * The quiet groups' waiting messages (groups named by messages: not lone messages without a group): how many, and
   * since when the oldest waits (a quiet batch's batching window counts from it, as a batch's from its oldest message).
   */
  quietWaiting(inFlight: (groupId: string) => number, totalInFlight: number): { count: number; oldestAvailableAt: number } {
    let count = 0;
    let oldestAvailableAt = Number.POSITIVE_INFINITY;
    for (const group of this.quietGroups(inFlight, totalInFlight)) {
      const waiting = this.groups.get(group) as { message: M }[];
      count += waiting.length;
      // A group's first in line is its oldest (as oldest() has it).
      oldestAvailableAt = Math.min(oldestAvailableAt, (waiting[0] as { message: M }).message.availableAt);
    }
    return { count, oldestAvailableAt };
  }

  private quietGroups(inFlight: (groupId: string) => number, totalInFlight: number): string[] {
    const rule = this.rule;
    if (rule === false) return [];
    return [...this.groups.keys()].filter((group) => {
      if (group.startsWith('\u0000')) return false;
      const flying = inFlight(group);
      return !(flying >= rule.minInFlight && flying > rule.share * totalInFlight);
    });
  }

  /** Empties the list (a stopping queue). */
  clear(): void {
    this.groups.clear();
    this.count = 0;
  }
}

type Candidate = { seq: number; noisy: boolean; flying: number };

/** Quiet before noisy; quiet ones oldest first; noisy ones fewest in flight first, then oldest. Without a rule: oldest. */
function goesBefore(a: Candidate, b: Candidate, fair: boolean): boolean {
  if (!fair) return a.seq < b.seq;
  if (a.noisy !== b.noisy) return !a.noisy;
  if (a.noisy && a.flying !== b.flying) return a.flying < b.flying;
  return a.seq < b.seq;
}
