// The reuse lookup: the client's earlier classification of the same pixels in another batch, by the model that would
// answer now, which the ingest copies rather than call DetectLabels again (docs/design.md §8).
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { isVisibleBatch } from '../../domain/batch';
import type { ModelVersion } from '../../domain/detection';
import type { Image } from '../../domain/image';
import { answeredByCurrentModel, modelOfRecord } from '../../model-version';
import { batchVisibilityRequest } from '../batch/read';
import { keyText, modelFactsOf } from '../model/current';
import type { TableAccess } from '../table/access';
import { imageNames, toBatch, toImage } from '../table/attributes';
import { batchGetAll } from '../table/query';
import { type BatchItem, type ImageItem, INDEX, splitPartition } from '../table/schema';

/**
 * The client's earlier classification of these pixels in another batch, within retention, by the model that would
 * answer now, or undefined: one eventually consistent index Query (a record written a moment ago may be missed: then
 * DetectLabels is called), then the batches' visibility and the records' models. The earliest classification of that
 * model (every copy is of it), with the latest person's verdict any of the records carries (docs/design.md §10: a
 * client never reviews the same pixels twice).
 */
export async function findReusable(
  store: TableAccess,
  clientId: string,
  batchId: string,
  fprint: string,
  onCurrentModel?: (current: ModelVersion | undefined) => void,
): Promise<Image | undefined> {
  const out = await store.ddb.send(new QueryCommand(reusableResultRequest(store.table, clientId, fprint, Math.floor(store.now() / 1000))));
  const records = ((out.Items ?? []) as ImageItem[]).filter(
    (i) => splitPartition(i.batch_id).batchId !== batchId && i.labels !== undefined,
  );
  // Never from a batch being erased (or expired): the one strongly consistent read of the batches found.
  const visible = await visibleBatches(
    store,
    records.map((i) => i.batch_id),
  );
  const found = records.filter((i) => visible.has(i.batch_id));
  if (found.length === 0) return undefined;
  // Only an answer of the model that would answer now (docs/decisions/0031-model-versions.md): the records' models and
  // boxes, and the current model, in one strongly consistent read.
  const { current, facts } = await modelFactsOf({ ddb: store.ddb, tableName: store.table }, batchGetAll, found);
  onCurrentModel?.(current);
  const now = found.flatMap((i) => {
    const f = facts.get(keyText(i));
    return f && answeredByCurrentModel(f, current) ? [{ ...toImage(i), ...f, model: modelOfRecord(f) }] : [];
  });
  // Copies carry their original's classification time: of equal times, the original (a copy made before copies
  // carried the other labels' boxes has none).
  const earliest = now.sort(
    (a, b) => (a.classifiedAt ?? 0) - (b.classifiedAt ?? 0) || Number(a.reused === true) - Number(b.reused === true),
  )[0];
  if (!earliest) return undefined;
  // The person's verdict goes with the pixels, whichever model answered (docs/design.md §10).
  const review = found.flatMap((i) => (i.review ? [toImage(i).review!] : [])).sort((a, b) => b.reviewedAt - a.reviewedAt)[0];
  const { review: _own, reused: _reused, ...classification } = earliest;
  return { ...classification, ...(review ? { review } : {}) };
}

/** Which of these batch partitions (at most BATCH_GET_MAX_KEYS distinct) are visible: neither being erased nor expired. */
async function visibleBatches(store: TableAccess, partitions: readonly string[]): Promise<Set<string>> {
  const distinct = [...new Set(partitions)];
  if (distinct.length === 0) return new Set();
  const nowS = Math.floor(store.now() / 1000);
  const items = await batchGetAll<BatchItem>(
    { ddb: store.ddb, tableName: store.table },
    batchVisibilityRequest(store.table, distinct).RequestItems,
  );
  return new Set(items.filter((item) => isVisibleBatch(toBatch(item), nowS)).map((item) => item.batch_id));
}

/** Records of one fingerprint a reuse lookup reads at most: one per batch of the client that holds the same pixels. */
export const REUSE_LOOKUP_LIMIT = 10;

/**
 * 5b for the ingest: the client's classified record of these pixels in another batch, within retention. One eventually
 * consistent Query of the client-fprint index (it projects what a copy needs), never another client's partition.
 */
export function reusableResultRequest(tableName: string, clientId: string, fprint: string, nowS: number): QueryCommandInput {
  return {
    TableName: tableName,
    IndexName: INDEX.clientFprint,
    KeyConditionExpression: '#clientId = :client AND #fprint = :fprint',
    FilterExpression: '#status = :success AND #expiresAt > :now',
    ProjectionExpression: '#partition, #fprint, #status, #labels, #catConfidence, #cats, #classifiedAt, #expiresAt, #review, #reused',
    ExpressionAttributeNames: imageNames(
      'clientId',
      'fprint',
      'status',
      'expiresAt',
      'partition',
      'labels',
      'catConfidence',
      'cats',
      'classifiedAt',
      'review',
      'reused',
    ),
    ExpressionAttributeValues: { ':client': clientId, ':fprint': fprint, ':success': 'success', ':now': nowS },
    Limit: REUSE_LOOKUP_LIMIT,
  };
}
