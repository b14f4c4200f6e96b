// The reconciliation sweep's listing, grace and bounds, against a private local S3 (s3rver) through the AWS SDK.

import { rmSync } from 'node:fs';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { type SweepDeps, type SweepLimits, sweepUploads } from '../../lib/reconcile/sweep';
import { LOCAL_NAMES } from '../../local/contract';
import { type LocalS3, localS3Client, startLocalS3 } from '../../local/s3/s3';
import { tempDataDir } from '../helpers';

const HOUR = 3_600_000;
let s3: LocalS3;
let client: S3Client;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDataDir('icecat-sweep-');
  s3 = await startLocalS3({ host: '127.0.0.1', port: 0, dataDir });
  client = localS3Client(s3.url);
  const put = (Key: string, Body = 'img') => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body }));
  for (let i = 0; i < 5; i += 1) await put(`uploads/demo/b1/img ${i}.jpg`, `image ${i}`);
  await put('uploads/other/b2/x+y.png');
  await put('uploads/not-a-batch');
  await put('processed/demo/b1/done.jpg');
});

afterAll(async () => {
  client.destroy();
  await s3.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A sweep whose clock runs `aheadMs` past the real one, recording what it sends and which batches it reports. */
function sweeper(aheadMs: number, more: Partial<SweepDeps> = {}) {
  const sent: string[] = [];
  const staleBatches: string[] = [];
  const deps: SweepDeps = {
    s3: client,
    bucket: s3.bucket,
    region: LOCAL_NAMES.region,
    sendMessages: async (bodies) => void sent.push(...bodies),
    onStaleBatch: (clientId, batchId) => void staleBatches.push(`${clientId}/${batchId}`),
    now: () => Date.now() + aheadMs,
    ...more,
  };
  const sentKeys = () => sent.map((b) => (JSON.parse(b) as S3Event).Records[0]?.s3.object.key);
  return { deps, sent, sentKeys, staleBatches };
}
const limits = (more: Partial<SweepLimits> = {}): SweepLimits => ({
  graceMs: HOUR,
  maxObjects: 100,
  maxDurationMs: 60_000,
  pageSize: 2,
  ...more,
});

describe('sweepUploads', () => {
  it('queues nothing while every upload is younger than the grace period', async () => {
    // Arrange
    const { deps, sent } = sweeper(0);

    // Act
    const result = await sweepUploads(deps, limits());

    // Assert
    expect([result.listed, result.stale, sent.length]).toEqual([7, 0, 0]);
  });

  it('queues every upload older than the grace period, reading every page, with the S3 event its notification carries', async () => {
    // Arrange
    const { deps, sent, sentKeys } = sweeper(2 * HOUR);

    // Act
    const result = await sweepUploads(deps, limits());

    // Assert
    expect(result).toMatchObject({ listed: 7, listRequests: 4, stale: 7, truncated: false });
    expect(sentKeys().sort()).toEqual([
      'uploads/demo/b1/img+0.jpg',
      'uploads/demo/b1/img+1.jpg',
      'uploads/demo/b1/img+2.jpg',
      'uploads/demo/b1/img+3.jpg',
      'uploads/demo/b1/img+4.jpg',
      'uploads/not-a-batch',
      'uploads/other/b2/x%2By.png',
    ]);
    const record = (JSON.parse(sent[0] as string) as S3Event).Records[0];
    expect(record).toMatchObject({
      eventSource: 'aws:s3',
      eventName: 'ObjectCreated:Put',
      s3: { bucket: { name: 'icecat-images' }, object: { size: 7, eTag: expect.stringMatching(/^[0-9a-f]{32}$/) } },
    });
  });

  it('reports each batch it queued uploads of once, and no batch for a key outside the layout', async () => {
    // Arrange
    const { deps, staleBatches } = sweeper(2 * HOUR);

    // Act
    const result = await sweepUploads(deps, limits());

    // Assert
    expect(staleBatches.sort()).toEqual(['demo/b1', 'other/b2']);
    expect(result.staleBatches.sort()).toEqual(['demo/b1', 'other/b2']);
  });

  it('leaves alone an upload whose message is still queued', async () => {
    // Arrange
    const { deps, sentKeys } = sweeper(2 * HOUR, { isQueued: (key) => key === 'uploads/demo/b1/img 2.jpg' });

    // Act
    const result = await sweepUploads(deps, limits());

    // Assert
    expect(result.alreadyQueued).toBe(1);
    expect(sentKeys()).not.toContain('uploads/demo/b1/img+2.jpg');
    expect(sentKeys()).toHaveLength(6);
  });

  it('queues at most maxObjects uploads a run and says the run was cut short', async () => {
    // Arrange
    const { deps, sent } = sweeper(2 * HOUR);

    // Act
    const result = await sweepUploads(deps, limits({ maxObjects: 3 }));

    // Assert
    expect([sent.length, result.queued.length, result.truncated]).toEqual([3, 3, true]);
    expect(result.listRequests).toBe(2);
  });

  it('lists no further page once the run has taken maxDurationMs', async () => {
    // Arrange: each clock reading is 40 s later than the one before.
    let reading = 0;
    const { deps } = sweeper(0, { now: () => Date.now() + 2 * HOUR + 40_000 * reading++ });

    // Act
    const result = await sweepUploads(deps, limits({ maxDurationMs: 60_000 }));

    // Assert
    expect([result.listRequests, result.listed, result.truncated]).toEqual([2, 4, true]);
  });

  it('goes on with the next batch when recounting one fails, and logs it', async () => {
    // Arrange
    const logged: string[] = [];
    const recounted: string[] = [];
    const { deps } = sweeper(2 * HOUR, {
      onStaleBatch: async (clientId, batchId) => {
        if (clientId === 'demo') throw new Error('throttled');
        recounted.push(`${clientId}/${batchId}`);
      },
      log: (line) => logged.push(line),
    });

    // Act
    await sweepUploads(deps, limits());

    // Assert
    expect(recounted).toEqual(['other/b2']);
    expect(logged.some((l) => l.includes('recounting a stale batch failed'))).toBe(true);
  });
});
