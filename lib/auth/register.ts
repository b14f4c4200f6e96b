// Registering clients and their API keys (client:create, the local stack's demo client). A client is one registry item
// (the ingest refuses uploads under any client id without one); only a key's hash is stored (lib/store/client/
// registrations.ts holds both items). Kept apart from the lookups so that no API function bundles code
// that writes these items.
import { API_KEY_PATTERN, ApiKeyConflictError, assertClientId, generateApiKey, hashApiKey, InvalidApiKeyError } from './api-keys';

/** What registering asks of the store (lib/store/client/registrations.ts Registrations). */
export interface ClientRegistry {
  /** Stores a key hash for a client: false, writing nothing, when the hash already belongs to another client. */
  storeApiKey(clientId: string, keyHash: string, nowMs: number): Promise<boolean>;
  /** Writes the client's registry item unless it exists. */
  storeClient(clientId: string, nowMs: number): Promise<void>;
}

/** Stores `key` (or a new one) for the client and registers the client (once); returns the key. */
export async function registerApiKey(
  registry: ClientRegistry,
  clientId: string,
  key: string = generateApiKey(),
  nowMs: number = Date.now(),
): Promise<string> {
  assertClientId(clientId);
  if (!API_KEY_PATTERN.test(key)) throw new InvalidApiKeyError('an API key is 16-256 of A-Z a-z 0-9 _ -');
  if (!(await registry.storeApiKey(clientId, hashApiKey(key), nowMs))) {
    throw new ApiKeyConflictError('this API key already belongs to another client');
  }
  await registerClient(registry, clientId, nowMs);
  return key;
}

/** Writes the client's registry item unless it exists. */
export async function registerClient(registry: ClientRegistry, clientId: string, nowMs: number = Date.now()): Promise<void> {
  assertClientId(clientId);
  await registry.storeClient(clientId, nowMs);
}
