// Counters equal records after a full disk refused exactly one of a record's two writes (docs/design.md, "A full disk").
// Without transactions (dynalite locally) a claim or a result is written, then its counter move: a full disk can refuse
// either, and the local services cannot do that to one chosen write, so a document client that refuses the chosen
// command once, as dynalite answers a write LevelDB has no room for, injects the fault. What follows is real: the next
// delivery's store calls, or the reconciliation sweep's count check, against the stack's table.
import { InternalServerError } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../lib/domain/batch';
import type { Claim, ImageResult } from '../../lib/domain/upload';
import { checkBatchCounts } from '../../lib/reconcile/batch-counts';
import { countRecords, countRequest, recountQuery } from '../../lib/store/batch/counters';
import { BatchStore } from '../../lib/store/batch-store';
import { readLiveBatches } from '../../lib/store/expiry/live';
import { imageKey } from '../../lib/store/table/schema';
import { aws, stackEnv, uniqueId } from '../helpers';

const CLIENT = 'counts-disk';
const table = () => stackEnv('TABLE_NAME');
const SUCCESS: ImageResult = { status: 'success', isCat: true, catConfidence: 97, cats: [], labels: [{ name: 'Cat', confidence: 97 }] };

type Refusal = 'record' | 'count' | 'done-stamp';

/** A document client that refuses one chosen write, once, as dynalite refuses a write its full disk has no room for. */
function refusingOnce(which: Refusal, fprint?: string): { ddb: DynamoDBDocumentClient; refused: () => boolean } {
  const real = aws().ddb;
  let refused = false;
  const matches = (command: unknown): boolean => {
    if (!(command instanceof UpdateCommand)) return false;
    const { Key, UpdateExpression = '' } = command.input;
    const onImage = Key?.img_fprint === fprint;
    if (which === 'record') return onImage;
    if (which === 'count') return Key?.img_fprint !== fprint && UpdateExpression.startsWith('ADD ');
    return UpdateExpression.includes('#doneAt = :now');
  };
  const ddb = {
    send: async (command: unknown) => {
      if (!refused && matches(command)) {
        refused = true;
        throw new InternalServerError({ message: 'IO error: /data/dynamodb/000012.log: No space left on device', $metadata: {} });
      }
      return real.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
  return { ddb, refused: () => refused };
}

const storeOf = (ddb: DynamoDBDocumentClient, onDone?: (b: Batch) => Promise<void>) =>
  new BatchStore({ ddb, tableName: table(), transactions: false, ...(onDone ? { onDone } : {}) });

function claimOf(batchId: string, n: number, claimId = uniqueId('claim')): Claim {
  return {
    clientId: CLIENT,
    batchId,
    fprint: `fp${n}`.padEnd(16, '0'),
    claimId,
    key: `uploads/${CLIENT}/${batchId}/img${n}.jpg`,
    fileName: `img${n}.jpg`,
    phash: '0'.repeat(16),
    format: 'jpeg',
    width: 100,
    height: 100,
    now: Date.now(),
    leaseMs: 60_000,
    expiresAt: Math.floor(Date.now() / 1000) + 86_400,
  };
}

const finishOf = (c: Claim) => ({
  result: SUCCESS,
  uploadedAt: c.now,
  now: Date.now(),
  restingKey: `processed/${c.key.slice('uploads/'.length)}`,
});

/** A batch closed with two declared files, the first of them classified. */
async function batchWithOneDone(): Promise<string> {
  const store = storeOf(aws().ddb);
  const batchId = uniqueId('disk');
  await store.openBatch({ clientId: CLIENT, batchId, now: Date.now(), retentionDays: 1 });
  await store.close(CLIENT, batchId, 2);
  const first = claimOf(batchId, 1);
  await store.claim(first);
  await store.finish(first, finishOf(first));
  return batchId;
}

/** The counters the batch's records add up to. */
async function recordsCount(batchId: string) {
  const out = await aws().ddb.send(new QueryCommand(recountQuery(table(), CLIENT, batchId)));
  return countRecords((out.Items ?? []) as never);
}

/**
 * The next delivery of the upload, as the ingest makes it once the failed run's lease is over: claims (or takes the
 * claim over), then finishes; or finds the result recorded and repairs.
 */
async function deliverAgain(batchId: string, n: number): Promise<void> {
  const store = storeOf(aws().ddb);
  const again = { ...claimOf(batchId, n), now: Date.now() + 61_000 };
  const outcome = await store.claim(again);
  if (outcome.held) await store.finish(again, finishOf(again));
  else if (outcome.existing.status === 'success') await store.repairAfterRedelivery(CLIENT, batchId);
  else throw new Error(`the redelivery found the image ${outcome.existing.status}, claimed until ${outcome.existing.leaseUntil}`);
}

describe('a full disk refusing one of the two writes (injected fault: a write refused with No space left on device)', () => {
  it.each([
    ['the claim, its record write refused', 'record' as const, 'claim' as const],
    ['the claim, its counter move refused', 'count' as const, 'claim' as const],
    ['the result, its record write refused', 'record' as const, 'finish' as const],
    ['the result, its counter move refused', 'count' as const, 'finish' as const],
  ])('%s: the next delivery leaves counters equal to the records and the batch done', async (_, which, step) => {
    // Arrange
    const batchId = await batchWithOneDone();
    const second = claimOf(batchId, 2);
    const faulty = refusingOnce(which, second.fprint);
    if (step === 'finish') await storeOf(aws().ddb).claim(second);

    // Act: the refused write fails the delivery; the upload comes again.
    const attempt = step === 'claim' ? storeOf(faulty.ddb).claim(second) : storeOf(faulty.ddb).finish(second, finishOf(second));
    await expect(attempt).rejects.toThrow(/No space left on device/);
    expect(faulty.refused()).toBe(true);
    await deliverAgain(batchId, 2);

    // Assert
    const batch = await storeOf(aws().ddb).getBatch(CLIENT, batchId);
    expect(batch?.counts).toEqual(await recordsCount(batchId));
    expect(batch?.counts).toMatchObject({ total: 2, pending: 0, success: 2 });
    expect(batch?.doneAt).toBeDefined();
  });
});

describe("the reconciliation sweep's count check", () => {
  const sweep = (seen: Map<string, string>, onDone: (b: Batch) => Promise<void>) =>
    checkBatchCounts(
      {
        batches: () => readLiveBatches({ ddb: aws().ddb, tableName: table() }, Math.floor(Date.now() / 1000)),
        store: storeOf(aws().ddb, onDone),
        seen,
      },
      { maxBatches: 100_000 },
    );

  it('stamps done, with its completion hook, a batch whose done stamp a full disk refused (injected fault)', async () => {
    // Arrange: the last result is counted, and the write that stamps the batch done is refused.
    const batchId = await batchWithOneDone();
    const second = claimOf(batchId, 2);
    await storeOf(aws().ddb).claim(second);
    const faulty = refusingOnce('done-stamp');
    await expect(storeOf(faulty.ddb).finish(second, finishOf(second))).rejects.toThrow(/No space left on device/);
    const done: string[] = [];

    // Act
    const result = await sweep(new Map(), async (b) => void done.push(b.batchId));

    // Assert
    expect(result.recounted).toContainEqual({ batch: `${CLIENT}/${batchId}`, why: 'due', changed: false, done: true });
    expect(done).toEqual([batchId]);
    expect((await storeOf(aws().ddb).getBatch(CLIENT, batchId))?.doneAt).toBeDefined();
  });

  it('recounts and settles a batch whose counters cannot be right (pending < 0) when no upload of it comes again', async () => {
    // Arrange: the second image's claim was never counted, its result was (the state the issue found).
    const batchId = await batchWithOneDone();
    const second = claimOf(batchId, 2);
    await storeOf(aws().ddb).claim(second);
    await aws().ddb.send(new UpdateCommand(countRequest(table(), CLIENT, batchId, { total: -1, pending: -1 }, Date.now())));
    await aws().ddb.send(new UpdateCommand(countRequest(table(), CLIENT, batchId, { pending: -1, success: 1 }, Date.now())));
    await aws().ddb.send(
      new UpdateCommand({
        TableName: table(),
        Key: imageKey(CLIENT, batchId, second.fprint),
        UpdateExpression: 'SET op_status = :s',
        ExpressionAttributeValues: { ':s': 'success' },
      }),
    );
    const done: string[] = [];

    // Act
    const result = await sweep(new Map(), async (b) => void done.push(b.batchId));

    // Assert
    expect(result.recounted).toContainEqual({ batch: `${CLIENT}/${batchId}`, why: 'impossible', changed: true, done: true });
    const batch = await storeOf(aws().ddb).getBatch(CLIENT, batchId);
    expect(batch?.counts).toEqual(await recordsCount(batchId));
    expect(batch?.counts).toMatchObject({ total: 2, pending: 0, success: 2 });
    expect(done).toEqual([batchId]);
  });

  it('recounts a closed batch whose counters held still over two runs (counted twice: pending stays 1 for good)', async () => {
    // Arrange: every image classified, but one claim counted twice (a recount raced its counter move).
    const batchId = await batchWithOneDone();
    const second = claimOf(batchId, 2);
    await storeOf(aws().ddb).claim(second);
    await aws().ddb.send(new UpdateCommand(countRequest(table(), CLIENT, batchId, { total: 1, pending: 1 }, Date.now())));
    await storeOf(aws().ddb).finish(second, finishOf(second));
    expect((await storeOf(aws().ddb).getBatch(CLIENT, batchId))?.counts).toMatchObject({ total: 3, pending: 1, success: 2 });
    const seen = new Map<string, string>();
    const done: string[] = [];

    // Act
    const first = await sweep(seen, async (b) => void done.push(b.batchId));
    const second_ = await sweep(seen, async (b) => void done.push(b.batchId));

    // Assert: left alone once (it may be moving), recounted when it did not move.
    expect(first.recounted.map((r) => r.batch)).not.toContain(`${CLIENT}/${batchId}`);
    expect(second_.recounted).toContainEqual({ batch: `${CLIENT}/${batchId}`, why: 'stuck', changed: true, done: true });
    const batch = await storeOf(aws().ddb).getBatch(CLIENT, batchId);
    expect(batch?.counts).toEqual(await recordsCount(batchId));
    expect(done).toEqual([batchId]);
  });
});
