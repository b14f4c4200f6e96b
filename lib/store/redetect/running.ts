// The batches with a re-detection run going, from the sparse keys-only redetect-runs index (rd_live is set with the
// run and removed when it ends or is given back): what the reconcile sweep looks after, a page at a time, however many
// other batches are live.
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../table/access';
import { batchKeysOf } from '../table/query';
import { INDEX } from '../table/schema';
import { REDETECT_LIVE } from './run-state';

export function runningRedetectionsQuery(table: string, limit: number, startKey?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.redetectRuns,
    KeyConditionExpression: '#live = :live',
    ExpressionAttributeNames: { '#live': 'rd_live' },
    ExpressionAttributeValues: { ':live': REDETECT_LIVE },
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

/** Every batch with a run going, page by page (the index is eventually consistent: the sweep reads each summary). */
export const readRunningRedetections = (table: TableRef, pageSize = 500): AsyncGenerator<{ clientId: string; batchId: string }> =>
  batchKeysOf(table.ddb, (start) => runningRedetectionsQuery(table.tableName, pageSize, start));
