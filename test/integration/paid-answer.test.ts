// The DetectLabels answer a run paid for and could not record is kept on its claim, and the run that takes the claim
// over finds it (docs/design.md §1 step 6): the store's writes against the stack's DynamoDB (dynalite, or DynamoDB
// Local with transactions), which check the expressions as the service does.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Claim, ImageResult } from '../../lib/domain/upload';
import { BatchStore } from '../../lib/store/batch-store';
import { imageKey } from '../../lib/store/table/schema';
import { aws, stackEnv, uniqueId } from '../helpers';

const PAID: Extract<ImageResult, { status: 'success' }> = {
  status: 'success',
  isCat: true,
  catConfidence: 97.5,
  cats: [{ confidence: 97.5, box: { left: 0.1, top: 0.2, width: 0.3, height: 0.4 } }],
  labels: [
    { name: 'Cat', confidence: 97.5 },
    { name: 'Pet', confidence: 90 },
  ],
};

describe('an answer kept on its claim', () => {
  const store = () =>
    new BatchStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), transactions: stackEnv('DDB_TRANSACTIONS') === 'true' });
  const claimAt = (batchId: string, claimId: string, now: number): Claim => ({
    clientId: 'demo',
    batchId,
    fprint: 'f'.repeat(32),
    claimId,
    key: `uploads/demo/${batchId}/a.png`,
    etag: 'e1',
    fileName: 'a.png',
    phash: '0',
    format: 'png',
    width: 100,
    height: 100,
    now,
    leaseMs: 60_000,
    expiresAt: Math.floor(now / 1000) + 86_400,
  });

  it('is found by the run that takes the claim over, which records it; the record keeps no copy of it', async () => {
    const batchId = uniqueId('paid');
    const now = Date.now();
    await store().openBatch({ clientId: 'demo', batchId, now, retentionDays: 1 });
    const first = claimAt(batchId, 'first-run', now);
    expect(await store().claim(first)).toMatchObject({ held: true });

    const kept = await store().keepPaidResult(first, PAID);
    // The lease ended with the keep: the next run takes the claim over at once.
    const second = claimAt(batchId, 'second-run', now + 1);
    const takeover = await store().claim(second);
    const found = await store().paidResult(second);
    const keptByLoser = await store().keepPaidResult(first, { ...PAID, labels: [] });
    const finished = await store().finish(second, {
      result: found!,
      uploadedAt: now,
      now: now + 2,
      restingKey: `processed/demo/${batchId}/x.png`,
    });
    const item = (
      await aws().ddb.send(
        new GetCommand({ TableName: stackEnv('TABLE_NAME'), Key: imageKey('demo', batchId, first.fprint), ConsistentRead: true }),
      )
    ).Item;

    expect([kept, takeover, found, keptByLoser, finished]).toEqual([
      true,
      { held: true, takeover: true, uploadedAt: now },
      PAID,
      false,
      true,
    ]);
    expect(item).toMatchObject({ op_status: 'success', labels: PAID.labels });
    expect(item).not.toHaveProperty('rek_paid');
    expect(item).not.toHaveProperty('claim_id');
  });
});
