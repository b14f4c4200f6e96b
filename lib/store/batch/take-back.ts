// The ingest's deletes of what it has just written into a batch that is being erased or was erased meanwhile
// (docs/design.md §6): apart from BatchStore, which the API's functions share, so that only the ingest's bundle (and
// so its role) carries DeleteItem.
import { DeleteCommand, type DeleteCommandInput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../table/condition';
import { batchKey } from '../table/schema';
import { batchWrite } from '../table/update-expression';

export interface TakeBack {
  /** Deletes a record written a moment ago (without transactions, before its counter update was refused). */
  record(key: Record<string, unknown>): Promise<void>;
  /** Deletes a summary just opened, unless an upload counted into it since; true when it went. */
  openedBatch(clientId: string, batchId: string): Promise<boolean>;
}

export const takeBack = (ddb: DynamoDBDocumentClient, table: string): TakeBack => ({
  async record(key) {
    await ddb.send(new DeleteCommand({ TableName: table, Key: key }));
  },
  async openedBatch(clientId, batchId) {
    try {
      await ddb.send(new DeleteCommand(dropOpenedBatchRequest(table, clientId, batchId)));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  },
});

/**
 * Deletes a summary the ingest has just opened for an upload whose object turned out to be gone (erased with its
 * batch meanwhile), unless an upload counted into it since.
 */
export function dropOpenedBatchRequest(table: string, clientId: string, batchId: string): DeleteCommandInput {
  const w = batchWrite();
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.when(w.is('total', '=', ':zero', 0)).condition() };
}
