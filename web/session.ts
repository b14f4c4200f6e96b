// What the page remembers for this tab only (sessionStorage): the API key, and the batches created or opened here
// (the batch list falls back to them where the API cannot list a client's batches).
const KEY = 'icecat.apiKey';
const BATCHES = 'icecat.batches';

export const readKey = (): string | null => sessionStorage.getItem(KEY);
export const saveKey = (key: string): void => sessionStorage.setItem(KEY, key);

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(BATCHES);
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
