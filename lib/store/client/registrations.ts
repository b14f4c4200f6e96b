// Registering API keys and clients: a key's hash under its own partition (credentials.ts), a client as one registry
// item (CLIENT#{clientId}, #CLIENT) whose existence lets the ingest take the client's uploads. Each request is built by
// a pure function (unit-tested without a network) and sent by another.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { apiKeyItemKey, type ApiKeyItem, type StoreTable } from './keys';
import { clientKey } from '../table/schema';

/** PutItem that stores a key hash for a client. An existing hash is replaced only by the same owner's registration. */
export function putApiKeyRequest(tableName: string, clientId: string, keyHash: string, nowMs: number): PutCommandInput {
  const item: ApiKeyItem = { ...apiKeyItemKey(keyHash), owner_id: clientId, registered_ts: nowMs };
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

/** Stores a key hash for a client: false, writing nothing, when the hash already belongs to another client. */
export async function storeApiKey(table: StoreTable, clientId: string, keyHash: string, nowMs: number): Promise<boolean> {
  try {
    await table.ddb.send(new PutCommand(putApiKeyRequest(table.tableName, clientId, keyHash, nowMs)));
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/** Writes the client's registry item unless it exists. */
export async function storeClient(table: StoreTable, clientId: string, nowMs: number): Promise<void> {
  try {
    await table.ddb.send(new PutCommand(putClientRequest(table.tableName, clientId, nowMs)));
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}
