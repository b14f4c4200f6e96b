// Registering clients and their API keys (client:create, the local stack's demo client). A client is one registry item
// (the ingest refuses uploads under any client id without one); only a key's hash is stored (lib/store/registrations.ts
// holds both items). Kept apart from the lookups so that no API function bundles code
// that writes these items.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { storeApiKey, storeClient } from '../store/client/registrations';
import { API_KEY_PATTERN, ApiKeyConflictError, InvalidApiKeyError, assertClientId, generateApiKey, hashApiKey } from './api-keys';

/** Stores `key` (or a new one) for the client and registers the client (once); returns the key. */
export async function registerApiKey(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  clientId: string,
  key: string = generateApiKey(),
  nowMs: number = Date.now(),
): Promise<string> {
  assertClientId(clientId);
  if (!API_KEY_PATTERN.test(key)) throw new InvalidApiKeyError('an API key is 16-256 of A-Z a-z 0-9 _ -');
  if (!(await storeApiKey({ ddb, tableName }, clientId, hashApiKey(key), nowMs))) {
    throw new ApiKeyConflictError('this API key already belongs to another client');
  }
  await registerClient(ddb, tableName, clientId, nowMs);
  return key;
}

/** Writes the client's registry item unless it exists. */
export async function registerClient(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  clientId: string,
  nowMs: number = Date.now(),
): Promise<void> {
  assertClientId(clientId);
  await storeClient({ ddb, tableName }, clientId, nowMs);
}
