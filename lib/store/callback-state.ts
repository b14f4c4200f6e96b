// A completion callback's delivery state on its batch: the one write of the callbacks function, apart from BatchStore
// so that its bundle (and so its role) carries only this call.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { callbackStateRequest } from './writes';

/** Stores the completion callback's delivery state (`final`: delivered or given up); false when the batch is gone or being erased. */
export async function recordCallbackState(
  ddb: DynamoDBDocumentClient,
  table: string,
  clientId: string,
  batchId: string,
  state: object,
  final = false,
): Promise<boolean> {
  try {
    await ddb.send(new UpdateCommand(callbackStateRequest(table, clientId, batchId, state, final)));
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

