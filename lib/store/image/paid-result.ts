// The DetectLabels answer a run paid for, kept on its claim when the record's write fails after it (a conflict past
// its retries, throttling, a timeout of the write), so that the run taking the claim over records that answer instead
// of paying for another (docs/design.md §6). One attribute of the `processing` item, written only by the claim's
// holder; the record's write removes it (image-record.ts finishRequest).
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Claim, ImageResult } from '../../domain/upload';
import { IMAGE_ATTRIBUTES, type ImageAttribute } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { imageKey } from '../table/schema';
import { WriteExpression } from '../table/update-expression';

const PAID_NAME = '#paid';
const PAID_NAMES = { [PAID_NAME]: 'rek_paid' };

/** A write to an image record that names the answer kept on its claim (`#paid` → rek_paid) beside its attributes. */
export const paidWrite = (): WriteExpression<ImageAttribute | 'paid'> => new WriteExpression({ ...IMAGE_ATTRIBUTES, paid: 'rek_paid' });

export type PaidResult = Extract<ImageResult, { status: 'success' }>;

/** Keeps the answer on the claim, if this run still holds it, and ends its lease so a retry takes it over at once. */
export function keepPaidResultRequest(table: string, c: Claim, result: PaidResult): UpdateCommandInput {
  const w = paidWrite().set('paid', ':paid', JSON.stringify(result)).set('leaseUntil', ':zero', 0);
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    ...w.when(w.is('claimId', '=', ':claim', c.claimId)).update(),
  };
}

export function paidResultRequest(table: string, c: Claim): GetCommandInput {
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    ProjectionExpression: PAID_NAME,
    ExpressionAttributeNames: PAID_NAMES,
    ConsistentRead: true,
  };
}

export async function keepPaidResult(ddb: DynamoDBDocumentClient, table: string, c: Claim, result: PaidResult): Promise<boolean> {
  try {
    await ddb.send(new UpdateCommand(keepPaidResultRequest(table, c, result)));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false; // no longer this run's claim
    throw err;
  }
}

/** The answer a run kept on the claim just taken over, if any. */
export async function paidResult(ddb: DynamoDBDocumentClient, table: string, c: Claim): Promise<PaidResult | undefined> {
  const out = await ddb.send(new GetCommand(paidResultRequest(table, c)));
  const kept = out.Item?.rek_paid;
  if (typeof kept !== 'string') return undefined;
  try {
    const result = JSON.parse(kept) as PaidResult;
    return result.status === 'success' && Array.isArray(result.labels) ? result : undefined;
  } catch {
    return undefined;
  }
}
