// A crash leaves an image claimed (status processing, leased) by a run that no longer exists. The message that
// delivers the upload again must come back once that lease is over and take the claim over, with no reconciliation
// sweep; a message that finds a live run's claim must come back to its finished record and leave it as it is.
// The stack runs as `npm start` does, with 2 s leases and no sweep after the one at start.

import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Claim, Fingerprint } from '../../lib/domain/upload';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { removeUpload, restCopy } from '../../lib/ingest/storage';
import { BatchStore } from '../../lib/store/batch-store';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { bridgeStats, tempDataDir, uniqueId, waitFor, waitForBridgeIdle } from '../helpers';
import { distinctImages, keysUnder, type StackProcess, seededRandom, startStackProcess } from '../helpers/stack-process';

const LEASE_SECONDS = 2;
/**
 * The live run's lease in the last case: long enough that the handed-back message cannot take the claim over before
 * the test finishes the run, however slowly a loaded machine gets there.
 */
const LIVE_RUN_LEASE_SECONDS = 10;

let dir: string;
let stack: StackProcess;
let store: BatchStore;
let images: Buffer[];

beforeAll(async () => {
  dir = tempDataDir('icecat-lease-');
  mkdirSync(path.join(dir, 'data'));
  stack = await startStackProcess(path.join(dir, 'data'), path.join(dir, 'stack.log'), {
    CLAIM_LEASE_SECONDS: String(LEASE_SECONDS),
    ICECAT_RECONCILE_INTERVAL_SECONDS: '3600',
  });
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.dynamodbUrl), { marshallOptions: { removeUndefinedValues: true } });
  store = new BatchStore({ ddb, tableName: LOCAL_NAMES.table, transactions: false });
  images = await distinctImages(2, seededRandom(8));
}, 120_000);

afterAll(async () => {
  stack?.signal('SIGTERM');
  await stack?.exited;
  stack?.s3.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Claims the image of `key` as a run would just before it died (or while it still works): pending, leased. */
async function claimAsAnotherRun(
  batchId: string,
  key: string,
  image: Buffer,
  leaseSeconds = LEASE_SECONDS,
): Promise<{ claim: Claim; print: Fingerprint }> {
  const print = await fingerprint(image, { maxInputPixels: 100_000_000 });
  const now = Date.now();
  await store.openBatch({ clientId: 'demo', batchId, now, retentionDays: 30 });
  const claim: Claim = {
    clientId: 'demo',
    batchId,
    fprint: print.fprint,
    claimId: `other-run-${batchId}`,
    key,
    etag: createHash('md5').update(image).digest('hex'),
    fileName: path.basename(key),
    phash: print.phash,
    format: print.format,
    width: print.width,
    height: print.height,
    now,
    leaseMs: leaseSeconds * 1000,
    expiresAt: Math.floor(Date.now() / 1000) + 30 * 86_400,
  };
  expect(await store.claim(claim)).toMatchObject({ held: true, takeover: false });
  return { claim, print };
}

/**
 * Uploads `image` under `key` and waits for its record to say success, then for the bridge to be idle: the record
 * says success before the source is deleted, and the message is done only then.
 */
async function uploadUntilClassified(key: string, image: Buffer, batchId: string, fprint: string) {
  const putAt = Date.now();
  await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: image, ContentType: 'image/png' }));
  const record = await waitFor(
    async () => {
      const found = await store.getImage('demo', batchId, fprint);
      return found?.status === 'success' ? found : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `the record of ${key} to be classified` },
  );
  const classifiedAfterMs = Date.now() - putAt;
  await waitForBridgeIdle({ bridgeUrl: stack.bridgeUrl, timeoutMs: (LEASE_SECONDS + 10) * 1000 });
  return { record, classifiedAfterMs };
}

describe('a claim leased by another run', () => {
  it('is taken over when its lease is over, by the message handed back until then, with no sweep', async () => {
    // Arrange: the claim of a killed run, then the upload's event delivered again.
    const batchId = uniqueId('lease-dead');
    const key = `uploads/demo/${batchId}/cat.png`;
    const { claim, print } = await claimAsAnotherRun(batchId, key, images[0] as Buffer);
    const retriedBefore = (await bridgeStats(stack.bridgeUrl)).retried;

    // Act
    const { record, classifiedAfterMs } = await uploadUntilClassified(key, images[0] as Buffer, batchId, print.fprint);

    // Assert: handed back once, classified once the lease was over (and not a backoff or a sweep later), counted once.
    expect(record.classifiedAt).toBeGreaterThanOrEqual(claim.now + LEASE_SECONDS * 1000);
    // The retry the deferral asked for comes a second after the lease; the rest allows for a loaded machine.
    expect(classifiedAfterMs).toBeLessThan((LEASE_SECONDS + 1) * 1000 + 15_000);
    expect((await bridgeStats(stack.bridgeUrl)).retried - retriedBefore).toBe(1);
    expect(record).toMatchObject({ key, fileName: 'cat.png' });
    expect(await keysUnder(stack.s3, stack.bucket, `uploads/demo/${batchId}/`)).toEqual([]);
    expect(await keysUnder(stack.s3, stack.bucket, `processed/demo/${batchId}/`)).toEqual([
      `processed/demo/${batchId}/${print.fprint}.png`,
    ]);
    const batch = await waitFor(
      async () => (await store.getBatch('demo', batchId))?.counts.success === 1 && store.getBatch('demo', batchId),
    );
    expect(batch && batch.counts).toMatchObject({ total: 1, pending: 0, success: 1, fail: 0, duplicate: 0 });
  });

  it('is taken over when its lease is over also in a batch closed meanwhile, every declared file having arrived', async () => {
    // Arrange: the killed run's claim counted the batch's one declared file, then the client closed the batch.
    const batchId = uniqueId('lease-closed');
    const key = `uploads/demo/${batchId}/cat.png`;
    const { print } = await claimAsAnotherRun(batchId, key, images[0] as Buffer);
    expect(await store.close('demo', batchId, 1)).toMatchObject({ closed: true });

    // Act
    const { record } = await uploadUntilClassified(key, images[0] as Buffer, batchId, print.fprint);

    // Assert
    expect(record).toMatchObject({ key, fileName: 'cat.png' });
    expect(await keysUnder(stack.s3, stack.bucket, `uploads/demo/${batchId}/`)).toEqual([]);
    const batch = await waitFor(
      async () => (await store.getBatch('demo', batchId))?.counts.success === 1 && store.getBatch('demo', batchId),
    );
    expect(batch && batch.counts).toMatchObject({ total: 1, pending: 0, success: 1, fail: 0 });
  });

  it('is left to a slow run that finishes within its lease: the handed-back message finds the record and changes nothing', async () => {
    // Arrange: a live run holds the claim, and finishes (copy, record, delete the source) before its lease is over.
    const batchId = uniqueId('lease-live');
    const key = `uploads/demo/${batchId}/cat.png`;
    const { claim, print } = await claimAsAnotherRun(batchId, key, images[1] as Buffer, LIVE_RUN_LEASE_SECONDS);
    const restingKey = `processed/demo/${batchId}/${print.fprint}.png`;
    const retriedBefore = (await bridgeStats(stack.bridgeUrl)).retried;

    // Act
    await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: images[1], ContentType: 'image/png' }));
    await waitFor(async () => (await bridgeStats(stack.bridgeUrl)).retried > retriedBefore, { what: 'the message to be handed back' });
    const slowRunResult = {
      status: 'success' as const,
      isCat: false,
      catConfidence: 0,
      cats: [],
      labels: [{ name: 'Slow Run', confidence: 99 }],
    };
    const source = { bucket: stack.bucket, key, etag: claim.etag };
    await restCopy(stack.s3, source, restingKey);
    expect(await store.finish(claim, { result: slowRunResult, uploadedAt: claim.now, now: Date.now(), restingKey })).toBe(true);
    await removeUpload(stack.s3, source);
    await waitForBridgeIdle({ bridgeUrl: stack.bridgeUrl, timeoutMs: (LIVE_RUN_LEASE_SECONDS + 10) * 1000 });

    // Assert: the slow run's result stands, counted once, the object where it put it.
    const record = await store.getImage('demo', batchId, print.fprint);
    expect(record).toMatchObject({ status: 'success', labels: [{ name: 'Slow Run', confidence: 99 }] });
    expect((await store.getBatch('demo', batchId))?.counts).toMatchObject({ total: 1, pending: 0, success: 1 });
    expect(await keysUnder(stack.s3, stack.bucket, `uploads/demo/${batchId}/`)).toEqual([]);
    expect(await keysUnder(stack.s3, stack.bucket, `processed/demo/${batchId}/`)).toEqual([restingKey]);
  });
});
