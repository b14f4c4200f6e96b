// Which of a client's fingerprints it already has classified (POST /v1/fingerprints:known): its known items read by
// key (written with each classified record, record.ts), the batches they name, and a bounded fallback on the
// client-fprint index, so that asking about 1,000 fingerprints costs ten BatchGetItem calls, not a thousand index Queries.
import { type BatchGetCommandInput, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { sameModel } from '../../model-version';
import { visibleBatchesFilter } from '../client/images';
import { answeredNow, keyText, readCurrentModel } from '../model/current';
import { imageNames } from '../table/attributes';
import { BATCH_GET_MAX_KEYS, batchGetAll, type KeepFilter, type StoreContext, storeNowS, translate } from '../table/query';
import { batchPartition, type ImageItem, INDEX, type KnownItem, knownItemKey } from '../table/schema';
import { REUSE_LOOKUP_LIMIT } from './reuse';

/** BatchGetItem requests of the known items of these fingerprints, at most BATCH_GET_MAX_KEYS keys each. */
export function knownItemsRequests(tableName: string, clientId: string, fprints: readonly string[]): BatchGetCommandInput[] {
  const requests: BatchGetCommandInput[] = [];
  for (let i = 0; i < fprints.length; i += BATCH_GET_MAX_KEYS) {
    const keys = fprints.slice(i, i + BATCH_GET_MAX_KEYS).map((f) => knownItemKey(clientId, f));
    requests.push({
      RequestItems: {
        [tableName]: {
          Keys: keys,
          ProjectionExpression: 'img_fprint, known_in, rek_model, #ttl',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
        },
      },
    });
  }
  return requests;
}

/** Index Queries the fallback of a known-fingerprints lookup runs at once. */
const KNOWN_PARALLEL = 4;
/** Pages of one fingerprint's records the fallback reads before it counts as unknown (each page REUSE_LOOKUP_LIMIT records). */
const KNOWN_MAX_PAGES = 2;
/**
 * Fingerprints of one call the fallback looks up at most (the rest are answered unknown): a client that erased the
 * batches naming many of its fingerprints costs at most 200 index Queries a call, 100 tokens' worth of fingerprints.
 */
const KNOWN_FALLBACK_MAX = 100;

/**
 * Which of these fingerprints the client already has classified by the model that would answer now (within retention,
 * in a batch neither being erased nor expired): the ones the ingest would reuse rather than send to DetectLabels. Read by key: the client's known
 * items (BatchGetItem, 100 keys a call), then the batches they name (one strongly consistent BatchGetItem per 100).
 * Only where the batch named is gone (erased, being erased, or expired while an older batch may still hold the pixels)
 * is the client's own partition of the client-fprint index asked, skipping invisible batches. Another client's images
 * are never an answer. Records classified before the known items existed are not answered (they are still reused).
 * A known item names the model of its record; one written before items kept it, and every record the fallback finds,
 * is checked by its record's own model (current-model.ts answeredNow). Distinct, in the order asked.
 */
export async function knownFingerprints(ctx: StoreContext, clientId: string, fprints: readonly string[]): Promise<string[]> {
  const distinct = [...new Set(fprints)];
  // Only answers of the model that would answer now count (docs/decisions/0031-model-versions.md); none known, none do.
  const current = await readCurrentModel(ctx);
  if (!current) return [];
  const nowS = storeNowS(ctx);
  const namedBy = new Map<string, string>();
  /** Known items written before they kept their model: the record they name says it. */
  const unnamedModel = new Set<string>();
  const unsure: string[] = [];
  for (const request of knownItemsRequests(ctx.tableName, clientId, distinct)) {
    for (const item of await batchGetAll<Pick<KnownItem, 'img_fprint' | 'known_in' | 'ttl' | 'rek_model'>>(ctx, request.RequestItems)) {
      if (item.ttl <= nowS) {
        unsure.push(item.img_fprint);
        continue;
      }
      if (!item.rek_model) unnamedModel.add(item.img_fprint);
      else if (!sameModel(item.rek_model, current)) continue; // the latest answer is another model's
      namedBy.set(item.img_fprint, batchPartition(clientId, item.known_in));
    }
  }
  const visible = visibleBatchesFilter(ctx);
  const batches = [...new Set(namedBy.values())];
  const shown = new Set<string>();
  for (let i = 0; i < batches.length; i += BATCH_GET_MAX_KEYS) {
    const kept = await visible(batches.slice(i, i + BATCH_GET_MAX_KEYS).map((batch_id) => ({ batch_id }) as ImageItem));
    for (const item of kept) shown.add(item.batch_id);
  }
  const legacy = [...namedBy].filter(([fprint, batch]) => shown.has(batch) && unnamedModel.has(fprint));
  const legacyNow = await answeredNow(
    ctx,
    batchGetAll,
    legacy.map(([img_fprint, batch_id]) => ({ batch_id, img_fprint })),
  );
  const known = new Set<string>();
  for (const [fprint, batch] of namedBy) {
    if (!shown.has(batch)) unsure.push(fprint);
    else if (!unnamedModel.has(fprint) || legacyNow.has(keyText({ batch_id: batch, img_fprint: fprint }))) known.add(fprint);
  }
  await knownByIndex(ctx, clientId, unsure.slice(0, KNOWN_FALLBACK_MAX), visible, known);
  return distinct.filter((f) => known.has(f));
}

/** The fallback: each fingerprint's records in the client-fprint index, any of them in a visible batch making it known. */
async function knownByIndex(
  ctx: StoreContext,
  clientId: string,
  fprints: readonly string[],
  visible: KeepFilter<ImageItem>,
  known: Set<string>,
): Promise<void> {
  const nowS = storeNowS(ctx);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < fprints.length; i = next++) {
      let start: Record<string, unknown> | undefined;
      for (let page = 0; page < KNOWN_MAX_PAGES; page++) {
        const input = knownFingerprintRequest(ctx.tableName, clientId, fprints[i]!, nowS);
        const out = await ctx.ddb.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) })).catch(translate);
        const shown = await visible((out.Items ?? []) as ImageItem[]);
        if ((await answeredNow(ctx, batchGetAll, shown)).size > 0) {
          known.add(fprints[i]!);
          break;
        }
        start = out.LastEvaluatedKey;
        if (!start) break;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(KNOWN_PARALLEL, fprints.length) }, worker));
}

/**
 * 5b for an estimate: whether the client holds a classified record of these pixels, within retention, in any batch
 * (what the ingest would reuse). Keys only; a page of REUSE_LOOKUP_LIMIT records, paged on while none matched.
 */
export function knownFingerprintRequest(tableName: string, clientId: string, fprint: string, nowS: number): QueryCommandInput {
  return {
    TableName: tableName,
    IndexName: INDEX.clientFprint,
    KeyConditionExpression: '#clientId = :client AND #fprint = :fprint',
    FilterExpression: '#status = :success AND #expiresAt > :now AND attribute_exists(#labels)',
    ProjectionExpression: '#partition, #fprint',
    ExpressionAttributeNames: imageNames('clientId', 'fprint', 'status', 'expiresAt', 'partition', 'labels'),
    ExpressionAttributeValues: { ':client': clientId, ':fprint': fprint, ':success': 'success', ':now': nowS },
    Limit: REUSE_LOOKUP_LIMIT,
  };
}
