// The batches with a re-detection run going, from the sparse keys-only redetect-runs index (rd_live is set with the
// run and removed when it ends or is given back): what the reconcile sweep looks after, a page at a time, however many
// other batches are live.
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../table/access';
import { INDEX, splitPartition } from '../table/schema';
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
export async function* readRunningRedetections(table: TableRef, pageSize = 500): AsyncGenerator<{ clientId: string; batchId: string }> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.ddb.send(new QueryCommand(runningRedetectionsQuery(table.tableName, pageSize, start)));
    for (const key of page.Items ?? []) yield splitPartition(String(key.batch_id));
    start = page.LastEvaluatedKey;
  } while (start);
}
