// The audit sample as stored (docs/accuracy.md): each drawn image's `audit` map and its key in the sparse batch-audit
// index (pending P#, reviewed R#, then the random queue order, the stratum and the person's verdict), and the strata's
// sizes at the last draw on the batch summary: their reads. The writes of a draw are audit-draw.ts; the draw itself is
// lib/review/audit-sample.ts; the estimate, lib/review/accuracy.ts. Key conditions only: never a Scan, never a filter
// over the batch.
import { GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../domain/image';
import type { AuditStratum } from '../../domain/review';
import { batchImagePages } from '../batch/pages';
import { readImages } from '../review/queue';
import { batchNames, imageNames } from '../table/attributes';
import type { StartKey } from '../table/cursor';
import { batchGetAll, type Page, type PageRequest, type StoreContext } from '../table/query';
import { AUDIT_DONE, AUDIT_PENDING, batchKey, batchPartition, type ImageItem, INDEX, imageKey } from '../table/schema';

export type Ctx = Pick<StoreContext, 'ddb' | 'tableName' | 'now'>;

/** Images of each stratum: the batch's classified images by the machine's verdict. */
export type StrataSizes = Record<AuditStratum, number>;

/** The batch's classified images as a draw sees them: verdicts, reviews and whether already drawn (a projected read). */
export async function auditCandidates(ctx: Ctx, clientId: string, batchId: string): Promise<Image[]> {
  const out: Image[] = [];
  const pages = batchImagePages(ctx, clientId, batchId, { attributes: ['fprint', 'status', 'isCat', 'review', 'audit'], pageSize: 2000 });
  for await (const page of pages) for (const image of page) if (image.status === 'success') out.push(image);
  return out;
}

/** The strata's sizes at the batch's last draw, or undefined when it was never audited. */
export async function strataSizes(ctx: Ctx, clientId: string, batchId: string): Promise<StrataSizes | undefined> {
  const out = await ctx.ddb.send(
    new GetCommand({
      TableName: ctx.tableName,
      Key: batchKey(clientId, batchId),
      ProjectionExpression: '#auditPopulation',
      ExpressionAttributeNames: batchNames('auditPopulation'),
    }),
  );
  const sizes = out.Item?.audit_pop as { c?: number; n?: number } | undefined;
  return sizes ? { cat: Number(sizes.c ?? 0), notCat: Number(sizes.n ?? 0) } : undefined;
}

/** A batch-audit key as the estimate reads it. */
export interface AuditEntry {
  stratum: AuditStratum;
  /** The person's verdict, once reviewed. */
  reviewedCat?: boolean;
}

/** An entry of the sample with the image it is. */
export interface AuditedEntry extends AuditEntry {
  fprint: string;
}

/** Parses a batch-audit key (schema.ts auditKey). */
export function auditEntryOf(key: string): AuditEntry {
  const tail = key.slice(2 + 12);
  return {
    stratum: tail[0] === 'c' ? 'cat' : 'notCat',
    ...(key.startsWith(AUDIT_DONE) ? { reviewedCat: tail[1] === 'c' } : {}),
  };
}

/** A Query of the batch's audit entries: all of them, or the pending ones (in their random order). */
export function auditEntriesRequest(table: string, clientId: string, batchId: string, pendingOnly: boolean): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.batchAudit,
    KeyConditionExpression: pendingOnly ? '#partition = :partition AND begins_with(#auditKey, :pending)' : '#partition = :partition',
    // DynamoDB refuses a name or value no expression uses.
    ExpressionAttributeNames: pendingOnly ? imageNames('partition', 'auditKey') : imageNames('partition'),
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), ...(pendingOnly ? { ':pending': AUDIT_PENDING } : {}) },
  };
}

/** Every entry of the batch's audit sample, from the index's keys alone (as many pages as it fills). */
export async function auditEntries(ctx: Ctx, clientId: string, batchId: string): Promise<AuditedEntry[]> {
  const out: AuditedEntry[] = [];
  let after: Record<string, unknown> | undefined;
  do {
    const request = auditEntriesRequest(ctx.tableName, clientId, batchId, false);
    const page = await ctx.ddb.send(new QueryCommand({ ...request, ...(after ? { ExclusiveStartKey: after } : {}) }));
    for (const item of (page.Items ?? []) as { audit_key: string; img_fprint: string }[])
      out.push({ ...auditEntryOf(item.audit_key), fprint: item.img_fprint });
    after = page.LastEvaluatedKey;
  } while (after);
  return out;
}

/**
 * The batch's classified images with both their answers' verdicts and models (GET …/accuracy's per-model estimates),
 * only when one of these audited images keeps an answer a re-detection replaced: first those images' `prev` by key (one
 * BatchGetItem per 100), then, if any has one, the partition once, projected. Undefined when none has one.
 */
export async function answersAfterRedetect(
  ctx: Ctx,
  clientId: string,
  batchId: string,
  audited: readonly string[],
): Promise<Image[] | undefined> {
  let redetected = false;
  for (let i = 0; i < audited.length && !redetected; i += 100) {
    const keys = audited.slice(i, i + 100).map((f) => imageKey(clientId, batchId, f));
    const items = await batchGetAll<Partial<ImageItem>>(ctx, {
      [ctx.tableName]: {
        Keys: keys,
        ProjectionExpression: '#previous',
        ExpressionAttributeNames: imageNames('previous'),
        ConsistentRead: true,
      },
    });
    redetected = items.some((item) => item.prev !== undefined);
  }
  if (!redetected) return undefined;
  const out: Image[] = [];
  const attributes = ['fprint', 'status', 'isCat', 'review', 'model', 'detections', 'classifiedAt', 'previous'] as const;
  for await (const page of batchImagePages(ctx, clientId, batchId, { attributes: [...attributes], pageSize: 2000 }))
    for (const image of page) if (image.status === 'success') out.push(image);
  return out;
}

/**
 * A page of the audit queue (GET …/images?audit=pending): drawn images no person has reviewed, in the random order the
 * draw gave them (stable across pages). The index holds keys only, so the page's images are then read by one consistent
 * BatchGetItem, which also leaves out an image reviewed a moment ago that the index still lists.
 */
export async function queryAuditQueue(ctx: StoreContext, clientId: string, batchId: string, page: PageRequest): Promise<Page<Image>> {
  const partition = batchPartition(clientId, batchId);
  const scope = JSON.stringify(['audit-queue', partition]);
  const start = page.cursor === undefined ? undefined : ctx.cursors.decode(page.cursor, scope);
  const request = auditEntriesRequest(ctx.tableName, clientId, batchId, true);
  const out = await ctx.ddb.send(
    new QueryCommand({
      ...request,
      Limit: page.limit,
      ...(start ? { ExclusiveStartKey: { batch_id: partition, img_fprint: String(start.f), audit_key: String(start.k) } } : {}),
    }),
  );
  const keys = (out.Items ?? []) as { img_fprint: string }[];
  const images = await readImages(
    ctx,
    clientId,
    batchId,
    keys.map((k) => k.img_fprint),
  );
  const last = out.LastEvaluatedKey as { img_fprint: string; audit_key: string } | undefined;
  const cursorKey: StartKey | undefined = last ? { f: last.img_fprint, k: last.audit_key } : undefined;
  return {
    items: images.filter((i) => i.review === undefined && i.status === 'success'),
    ...(cursorKey ? { cursor: ctx.cursors.encode(cursorKey, scope) } : {}),
  };
}
