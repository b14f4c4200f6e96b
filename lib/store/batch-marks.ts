// The two summary writes and reads the erase and callbacks functions make, apart from BatchStore so that their
// bundles (and so their roles) carry only these calls: whether a batch is marked for erasure, and a callback's
// delivery state.
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BATCH_ATTRIBUTES, batchNames } from './attributes';
import { batchKey } from './schema';
import { callbackStateRequest } from './writes';

/** Whether the batch's summary exists and is marked as being erased (DELETE). */
export async function isMarkedForErasure(ddb: DynamoDBDocumentClient, table: string, clientId: string, batchId: string): Promise<boolean> {
  const out = await ddb.send(
    new GetCommand({
      TableName: table,
      Key: batchKey(clientId, batchId),
      ProjectionExpression: '#deleting',
      ExpressionAttributeNames: batchNames('deleting'),
      ConsistentRead: true,
    }),
  );
  return out.Item?.[BATCH_ATTRIBUTES.deleting] === true;
}

/** Stores the completion callback's delivery state; false when the batch is gone or being erased. */
export async function recordCallbackState(
  ddb: DynamoDBDocumentClient,
  table: string,
  clientId: string,
  batchId: string,
  state: object,
): Promise<boolean> {
  try {
    await ddb.send(new UpdateCommand(callbackStateRequest(table, clientId, batchId, state)));
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
