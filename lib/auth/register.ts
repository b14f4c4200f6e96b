// Registering clients and their API keys (client:create, the local stack's demo client). A client is one registry item
// (CLIENT#{clientId}, #CLIENT): the ingest refuses uploads under any client id without one. Only a key's hash is
// stored, under its own partition (api-keys.ts). Kept apart from the lookups so that no API function bundles code
// that writes these items.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, type DynamoDBDocumentClient, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { clientKey } from '../store/schema';
import {
  API_KEY_PATTERN,
  ApiKeyConflictError,
  InvalidApiKeyError,
  apiKeyItemKey,
  assertClientId,
  generateApiKey,
  hashApiKey,
  type ApiKeyItem,
} from './api-keys';

/** PutItem that stores a key's hash for a client. Without `overwrite` an existing hash is never replaced. */
export function putApiKeyRequest(tableName: string, clientId: string, key: string, nowMs: number): PutCommandInput {
  const item: ApiKeyItem = { ...apiKeyItemKey(hashApiKey(key)), owner_id: clientId, registered_ts: nowMs };
  return {
    TableName: tableName,
    Item: item,
    // A re-registration of the same key for the same client (the demo key at every start) is allowed.
    ConditionExpression: 'attribute_not_exists(batch_id) OR owner_id = :owner',
    ExpressionAttributeValues: { ':owner': clientId },
  };
}

/** PutItem of a client's registry item; registering again keeps the first registration time. */
export function putClientRequest(tableName: string, clientId: string, nowMs: number): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...clientKey(clientId), registered_ts: nowMs },
    ConditionExpression: 'attribute_not_exists(batch_id)',
  };
}

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
  try {
    await ddb.send(new PutCommand(putApiKeyRequest(tableName, clientId, key, nowMs)));
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) {
      throw new ApiKeyConflictError('this API key already belongs to another client', { cause: err });
    }
    throw err;
  }
  await registerClient(ddb, tableName, clientId, nowMs);
  return key;
}

/** Writes the client's registry item unless it exists. */
export async function registerClient(ddb: DynamoDBDocumentClient, tableName: string, clientId: string, nowMs: number = Date.now()): Promise<void> {
  assertClientId(clientId);
  try {
    await ddb.send(new PutCommand(putClientRequest(tableName, clientId, nowMs)));
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}
