// A completion callback's delivery state on its batch: the one write of the callbacks function, apart from BatchStore
// so that its bundle (and so its role) carries only this call.
import { type DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../table/condition';
import { batchKey } from '../table/schema';
import { batchWrite } from '../table/update-expression';

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
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/**
 * Records the completion callback's delivery state on a batch that still exists and is not being erased; a final
 * state (delivered, or given up) takes the batch out of the callbacks the sweep looks after.
 */
export function callbackStateRequest(table: string, clientId: string, batchId: string, state: object, final = false): UpdateCommandInput {
  const w = batchWrite().set('callback', ':state', state);
  if (final) w.remove('callbackDue');
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.when(w.exists('partition'), w.notExists('deleting')).update() };
}
