// What the page remembers for this tab only (sessionStorage): the API key, and the batches created or opened here
// (the batch list falls back to them where the API cannot list a client's batches); in memory, the batches erased
// from this page (a listing read from an index just after the erasure may still name them).
const KEY = 'icecat.apiKey';
const BATCHES = 'icecat.batches';
const erased = new Set<string>();
let lastErased: string | null = null;

export const readKey = (): string | null => sessionStorage.getItem(KEY);
export const saveKey = (key: string): void => sessionStorage.setItem(KEY, key);

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(BATCHES);
  erased.clear();
  lastErased = null;
}

export function knownBatches(): string[] {
  try {
    const list = JSON.parse(sessionStorage.getItem(BATCHES) ?? '[]') as unknown;
    return Array.isArray(list) ? list.filter((b): b is string => typeof b === 'string') : [];
  } catch {
    return [];
  }
}

export function rememberBatch(batchId: string): void {
  const list = [batchId, ...knownBatches().filter((b) => b !== batchId)].slice(0, 200);
  sessionStorage.setItem(BATCHES, JSON.stringify(list));
}

export function forgetBatch(batchId: string): void {
  sessionStorage.setItem(BATCHES, JSON.stringify(knownBatches().filter((b) => b !== batchId)));
}

export function forgetErasedBatch(batchId: string): void {
  erased.add(batchId);
  lastErased = batchId;
  forgetBatch(batchId);
}

export const wasErased = (batchId: string): boolean => erased.has(batchId);

/** The batch erased last, told once (the batch list says it is gone). */
export function takeLastErased(): string | null {
  const id = lastErased;
  lastErased = null;
  return id;
}
