// The audit sample as stored (docs/accuracy.md): each drawn image's `audit` map and its key in the sparse batch-audit
// index (pending P#, reviewed R#, then the random queue order, the stratum and the person's verdict), and the strata's
// sizes at the last draw on the batch summary. The draw itself is lib/review/audit-sample.ts; the estimate,
// lib/review/accuracy.ts. Key conditions only: never a Scan, never a filter over the batch.
import { GetCommand, QueryCommand, UpdateCommand, type QueryCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Audit, AuditStratum, Image } from '../domain';
import { batchGetRequests } from './access-patterns';
import { batchNames, imageNames, toImage } from './attributes';
import { conditionFailed, liveBatch } from './batch-summary';
import type { StartKey } from './cursor';
import { batchImagePages } from './export-pages';
import { batchGetAll, isVisibleImage, type Page, type PageRequest, type StoreContext } from './reader';
import {
  AUDIT_DONE,
  AUDIT_PENDING,
  INDEX,
  auditKey,
  batchKey,
  batchPartition,
  imageKey,
  nowSeconds,
  toStoredAudit,
  type ImageItem,
} from './schema';

type Ctx = Pick<StoreContext, 'ddb' | 'tableName' | 'now'>;

/** Images of each stratum: the batch's classified images by the machine's verdict. */
export type StrataSizes = Record<AuditStratum, number>;

/** The batch's classified images as a draw sees them: verdicts, reviews and whether already drawn (a projected read). */
export async function auditCandidates(ctx: Ctx, clientId: string, batchId: string): Promise<Image[]> {
  const out: Image[] = [];
  const pages = batchImagePages(ctx, clientId, batchId, { attributes: ['fprint', 'status', 'isCat', 'review', 'audit'], pageSize: 2000 });
  for await (const page of pages) for (const image of page) if (image.status === 'success') out.push(image);
  return out;
}

/** Remembers the strata's sizes at this draw on the summary (what the estimator weights by); false when the batch is gone. */
export async function setStrataSizes(ctx: Ctx, clientId: string, batchId: string, sizes: StrataSizes, nowMs: number): Promise<boolean> {
  const live = liveBatch(nowMs);
  const request: UpdateCommandInput = {
    TableName: ctx.tableName,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #auditPopulation = :sizes',
    ConditionExpression: live.condition,
    ExpressionAttributeNames: batchNames('auditPopulation', ...live.names),
    ExpressionAttributeValues: { ':sizes': { c: sizes.cat, n: sizes.notCat, ts: nowMs }, ...live.values },
  };
  try {
    await ctx.ddb.send(new UpdateCommand(request));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
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

/**
 * Draws one image into the sample: its `audit` map and its batch-audit key (reviewed already, or pending). Only if it
 * is still a classified image not drawn before, with the verdict read (so the key matches it).
 */
export function auditRequest(
  table: string,
  image: Pick<Image, 'clientId' | 'batchId' | 'fprint' | 'review'>,
  audit: Audit,
): UpdateCommandInput {
  const condition = ['#status = :success', 'attribute_not_exists(#audit)'];
  const values: Record<string, unknown> = { ':audit': toStoredAudit(audit), ':key': auditKey(audit, image.review), ':success': 'success' };
  let extraNames: Record<string, string> = {};
  if (image.review) {
    condition.push('#review.#ts = :ts');
    values[':ts'] = image.review.reviewedAt;
    extraNames = { '#ts': 'ts' };
  } else condition.push('attribute_not_exists(#review)');
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: 'SET #audit = :audit, #auditKey = :key',
    ConditionExpression: condition.join(' AND '),
    ExpressionAttributeNames: { ...imageNames('audit', 'auditKey', 'status', 'review'), ...extraNames },
    ExpressionAttributeValues: values,
  };
}

const AUDIT_PARALLEL = 16;

/** Writes the drawn images' audit (16 at a time); answers those written (one a review or another draw changed is not). */
export async function markAudited(ctx: Ctx, drawn: readonly { image: Image; audit: Audit }[]): Promise<Image[]> {
  const written: Image[] = [];
  for (let i = 0; i < drawn.length; i += AUDIT_PARALLEL) {
    await Promise.all(
      drawn.slice(i, i + AUDIT_PARALLEL).map(async ({ image, audit }) => {
        try {
          await ctx.ddb.send(new UpdateCommand(auditRequest(ctx.tableName, image, audit)));
          written.push({ ...image, audit });
        } catch (err) {
          if (!conditionFailed(err)) throw err;
        }
      }),
    );
  }
  return written;
}

/** A batch-audit key as the estimate reads it. */
export interface AuditEntry {
  stratum: AuditStratum;
  /** The person's verdict, once reviewed. */
  reviewedCat?: boolean;
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
export async function auditEntries(ctx: Ctx, clientId: string, batchId: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let after: Record<string, unknown> | undefined;
  do {
    const request = auditEntriesRequest(ctx.tableName, clientId, batchId, false);
    const page = await ctx.ddb.send(new QueryCommand({ ...request, ...(after ? { ExclusiveStartKey: after } : {}) }));
    for (const item of (page.Items ?? []) as { audit_key: string }[]) out.push(auditEntryOf(item.audit_key));
    after = page.LastEvaluatedKey;
  } while (after);
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
  const images = await readByKey(
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

/** The images of one batch by fingerprint, consistent, in the order asked; those gone or expired are left out. */
async function readByKey(ctx: StoreContext, clientId: string, batchId: string, fprints: string[]): Promise<Image[]> {
  if (fprints.length === 0) return [];
  const nowS = nowSeconds((ctx.now ?? Date.now)());
  const found = new Map<string, Image>();
  for (const request of batchGetRequests(ctx.tableName, clientId, batchId, fprints)) {
    const keys = request.RequestItems?.[ctx.tableName];
    if (!keys) continue;
    for (const item of await batchGetAll<Partial<ImageItem>>(ctx, { [ctx.tableName]: { ...keys, ConsistentRead: true } })) {
      if (isVisibleImage(item, nowS)) found.set(item.img_fprint, toImage(item));
    }
  }
  return fprints.flatMap((f) => found.get(f) ?? []);
}
