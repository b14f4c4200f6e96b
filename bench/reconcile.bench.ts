// The reconciliation sweep and the durable local queue:
// - one sweep over 10,000 objects under uploads/ of which 100 are past the grace period, on the local S3: time, S3
//   requests, and the modelled cost of that sweep on AWS (S3 LIST, SQS, Lambda);
// - recovery after kill -9: `npm start`'s command killed with SIGKILL in the middle of a 40-image upload, started again
//   on the same data dir with its default settings: seconds until the batch's objects have all left uploads/
//   (goal: at most one sweep interval plus the batch's processing time);
// - the journal's cost per send: append + fdatasync against append alone.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { sweepUploads } from '../lib/reconcile/sweep';
import { reconcileSettingsFromEnv } from '../local/config';
import { LOCAL_NAMES } from '../local/contract';
import { QueueJournal } from '../local/queue/journal';
import { localS3Client, startLocalS3 } from '../local/s3/s3';
import { distinctImages, keysUnder, seededRandom, startStackProcess, uploadImages } from '../test/helpers/stack-process';
import { benchStackEnv } from './on-stack';
import { headline as figure, type Headline, isSmoke, median, percentile, pick, round, sized } from './stats';

const OBJECTS = sized(10_000, 200);
const STALE = sized(100, 10);
const JOURNAL_SENDS = sized(2000, 100);
const RECOVERY_IMAGES = sized(40, 8);
/** A smoke run's stacks wait seconds, not a minute, for a sweep or a dead claim's lease. */
const RECOVERY_ENV = sized<Record<string, string>>(
  {},
  {
    CLAIM_LEASE_SECONDS: '2',
    ICECAT_RECONCILE_INTERVAL_SECONDS: '2',
    ICECAT_RECONCILE_GRACE_SECONDS: '1',
  },
);

/** AWS list prices, us-east-1, 2026 (docs/scaling.md §4 names the sources). */
const PRICE = {
  s3ListPer1000: 0.005,
  sqsPerMillion: 0.4,
  lambdaGbSecond: 0.0000166667,
  lambdaPerMillion: 0.2,
};

async function sweepBench(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'icecat-bench-sweep-'));
  const s3 = await startLocalS3({ host: '127.0.0.1', port: 0, dataDir });
  const client = localS3Client(s3.url);
  try {
    const putAll = async (keys: string[]) => {
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < keys.length; i = next++) {
          // s3rver answers InternalError now and then when it races itself creating a key's folders: put again.
          for (let attempt = 1; ; attempt += 1) {
            try {
              await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: keys[i], Body: 'x' }));
              break;
            } catch (err) {
              if (attempt >= 5) throw err;
            }
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    };
    // The stale ones first, then the fresh ones: the grace period ends between the two (s3rver's LastModified has
    // whole seconds, hence the 2.5 s gap).
    await putAll(Array.from({ length: STALE }, (_, i) => `uploads/demo/stale-${i % 4}/img-${i}.jpg`));
    const staleDone = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const freshFrom = Date.now();
    await putAll(Array.from({ length: OBJECTS - STALE }, (_, i) => `uploads/demo/fresh-${i % 20}/img-${i}.jpg`));

    let requests = 0;
    client.middlewareStack.add((next) => (args) => ((requests += 1), next(args)), { step: 'finalizeRequest', name: 'countRequests' });
    let sent = 0;
    const runs: number[] = [];
    let result: Awaited<ReturnType<typeof sweepUploads>> | undefined;
    for (let run = 0; run < 3; run += 1) {
      requests = 0;
      sent = 0;
      const graceMs = Date.now() - (staleDone + freshFrom) / 2;
      const t = performance.now();
      result = await sweepUploads(
        { s3: client, bucket: s3.bucket, region: LOCAL_NAMES.region, sendMessages: async (bodies) => void (sent += bodies.length) },
        { graceMs, maxObjects: 5000, maxDurationMs: 60_000 },
      );
      runs.push(performance.now() - t);
    }
    if (result?.queued.length !== STALE || sent !== STALE)
      throw new Error(`expected ${STALE} stale uploads, got ${JSON.stringify(result)}`);
    const listRequests = result.listRequests;
    const sendRequests = Math.ceil(STALE / 10);
    // On AWS a run of this size takes about as long as the local one (page latency ~ tens of ms each): modelled at 2 s, 256 MB.
    const lambdaSeconds = 2;
    const costPerSweep =
      (listRequests / 1000) * PRICE.s3ListPer1000 +
      (sendRequests / 1e6) * PRICE.sqsPerMillion +
      (1 / 1e6) * PRICE.lambdaPerMillion +
      lambdaSeconds * 0.25 * PRICE.lambdaGbSecond;
    const sweepsPerMonth = (30 * 24 * 60) / 5;
    return {
      objects: OBJECTS,
      stale: STALE,
      sweepMedianMs: round(median(runs)),
      sweepRunsMs: runs.map((r) => round(r)),
      s3RequestsPerSweep: requests,
      listRequests,
      getRequests: 0,
      queued: result.queued.length,
      aws: {
        listRequestsPerSweep: listRequests,
        getRequestsPerSweep: 0,
        sqsSendMessageBatchRequests: sendRequests,
        costPerSweepUsd: round(costPerSweep, 7),
        costPerMonthAtRate5MinUsd: round(costPerSweep * sweepsPerMonth, 3),
        note: 'S3 LIST $0.005/1,000; SQS $0.40/million requests; Lambda 256 MB, ~2 s, $0.0000166667/GB-s + $0.20/million',
      },
    };
  } finally {
    client.destroy();
    await s3.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function recoveryBench(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'icecat-bench-recovery-'));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  const logFile = path.join(dir, 'stack.log');
  const images = await distinctImages(RECOVERY_IMAGES, seededRandom(7));
  let stack = await startStackProcess(dataDir, logFile, benchStackEnv(RECOVERY_ENV));
  try {
    const uploading = uploadImages(stack, 'recovery', images);
    await new Promise((resolve) => setTimeout(resolve, sized(600, 300)));
    stack.signal('SIGKILL');
    await stack.exited;
    const failed = await uploading;
    const leftAtKill = images.length - failed.length;

    const restartedAt = performance.now();
    stack = await startStackProcess(dataDir, logFile, benchStackEnv(RECOVERY_ENV));
    const readyS = (performance.now() - restartedAt) / 1000;
    const left = await keysUnder(stack.s3, stack.bucket, 'uploads/demo/recovery/');
    // As a client does: a PUT cut by the kill is sent again (s3rver may have left that object half-written).
    const cut = new Set(failed);
    for (const [i, image] of images.entries()) {
      const Key = `uploads/demo/recovery/img-${String(i).padStart(2, '0')}.png`;
      if (cut.has(Key)) await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key, Body: image }));
    }
    for (;;) {
      const now = await keysUnder(stack.s3, stack.bucket, 'uploads/demo/recovery/');
      if (now.length === 0) break;
      if (performance.now() - restartedAt > 10 * 60_000) throw new Error('uploads/ not empty 10 minutes after the restart');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const recoveredS = (performance.now() - restartedAt) / 1000;
    const intervalMs = isSmoke() ? Number(RECOVERY_ENV.ICECAT_RECONCILE_INTERVAL_SECONDS) * 1000 : reconcileSettingsFromEnv().intervalMs;
    return {
      uploadsStoredBeforeKill: leftAtKill,
      putsCutByKill: failed.length,
      underUploadsAtRestart: left.length,
      secondsUntilStackUp: round(readyS),
      secondsUntilUploadsEmpty: round(recoveredS),
      sweepIntervalSeconds: intervalMs / 1000,
      goal: 'secondsUntilUploadsEmpty <= sweep interval + processing time of what was left',
      note: 'messages in the journal are delivered at once on restart; an image the killed stack had claimed waits for its lease (CLAIM_LEASE_SECONDS, 30 s locally); only an object whose message never reached the journal waits for a sweep',
    };
  } finally {
    stack.signal('SIGKILL');
    await stack.exited;
    stack.s3.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

function journalBench(): Record<string, unknown> {
  const perSend = (fsync: boolean): number[] => {
    const dir = mkdtempSync(path.join(tmpdir(), 'icecat-bench-journal-'));
    const journal = new QueueJournal(path.join(dir, 'queue.journal'), { fsync });
    const body = JSON.stringify({ Records: [{ s3: { object: { key: 'uploads/demo/b/'.padEnd(600, 'x') } } }] });
    const samples: number[] = [];
    for (let i = 0; i < JOURNAL_SENDS; i += 1) {
      const t = performance.now();
      journal.sent({ messageId: `m${i}`, body, md5OfBody: 'md5', sentAt: Date.now(), receiveCount: 0 });
      samples.push((performance.now() - t) * 1000);
      journal.deleted(`m${i}`);
    }
    journal.close();
    rmSync(dir, { recursive: true, force: true });
    return samples;
  };
  const synced = perSend(true);
  const unsynced = perSend(false);
  return {
    sends: JOURNAL_SENDS,
    fsyncMedianUs: round(median(synced), 1),
    fsyncP99Us: round(percentile(synced, 99), 1),
    noSyncMedianUs: round(median(unsynced), 1),
    fsyncOverNoSync: round(median(synced) / median(unsynced), 1),
    note: 'per send: one JSON line appended, then fdatasync; receives and deletes are appended without a sync',
  };
}

export default async function run(): Promise<Record<string, unknown>> {
  return {
    journal: journalBench(),
    sweep: await sweepBench(),
    recoveryAfterKill9: await recoveryBench(),
  };
}

export function headline(r: Record<string, unknown>): Headline[] {
  const interval = pick(r, 'recoveryAfterKill9', 'sweepIntervalSeconds');
  return [
    // Met here when within one sweep interval alone: stricter than the goal, which adds the processing time.
    figure(
      'seconds until uploads/ empty after kill -9',
      pick(r, 'recoveryAfterKill9', 'secondsUntilUploadsEmpty'),
      `<= ${String(interval)} (one sweep interval) + processing`,
    ),
    figure(`sweep of ${String(pick(r, 'sweep', 'objects'))} objects, median ms`, pick(r, 'sweep', 'sweepMedianMs')),
    figure('journal fsync per send, median µs', pick(r, 'journal', 'fsyncMedianUs')),
  ];
}
