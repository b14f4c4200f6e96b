// The writes of an audit draw (docs/accuracy.md): the strata's sizes on the summary and each drawn image's `audit` map
// and batch-audit key. Apart from the reads (audit.ts) so that the read function's bundle sends no UpdateItem.
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../domain/image';
import type { Audit } from '../../domain/review';
import { liveBatch } from '../batch/summary';
import { reviewAsRead } from '../review/verdicts';
import { conditionFailed } from '../table/condition';
import { auditKey, batchKey, imageKey, toStoredAudit } from '../table/schema';
import { batchWrite, imageWrite } from '../table/update-expression';
import type { Ctx, StrataSizes } from './queue';

/** Remembers the strata's sizes at this draw on the summary (what the estimator weights by); false when the batch is gone. */
export async function setStrataSizes(ctx: Ctx, clientId: string, batchId: string, sizes: StrataSizes, nowMs: number): Promise<boolean> {
  const w = batchWrite().set('auditPopulation', ':sizes', { c: sizes.cat, n: sizes.notCat, ts: nowMs });
  const request: UpdateCommandInput = {
    TableName: ctx.tableName,
    Key: batchKey(clientId, batchId),
    ...w.when(liveBatch(w, nowMs)).update(),
  };
  try {
    await ctx.ddb.send(new UpdateCommand(request));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
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
  const w = imageWrite().set('audit', ':audit', toStoredAudit(audit)).set('auditKey', ':key', auditKey(audit, image.review));
  w.when(w.is('status', '=', ':success', 'success'), w.notExists('audit'), reviewAsRead(w, image));
  return { TableName: table, Key: imageKey(image.clientId, image.batchId, image.fprint), ...w.update() };
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
