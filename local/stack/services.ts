// The pieces the local stack (stack.ts) starts besides its services: the DynamoDB clients its sweeps use, the demo
// client's key, the data dir's secrets, the detector and the ingest handler (loaded late), and the closing in order.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { IngestWiring } from '../../functions/ingest/app';
import { presentBatch } from '../../lib/api/present';
import { registerApiKey } from '../../lib/auth/register';
import { documentClientOf } from '../../lib/aws/clients';
import { batchesOfKeys } from '../../lib/ingest/s3-key';
import type { JobQueue } from '../../lib/jobs/queue';
import { completionHook } from '../../lib/notify/wiring';
import { type CountCheckResult, checkBatchCounts } from '../../lib/reconcile/batch-counts';
import { callbackSweepLimits } from '../../lib/reconcile/callbacks';
import { type RedetectSweepResult, redetectSweepOf } from '../../lib/reconcile/redetect-runs';
import { keysInS3Message } from '../../lib/reconcile/s3-event';
import { BatchStore } from '../../lib/store/batch-store';
import { CallbackRequeues } from '../../lib/store/callback/requeue';
import { ClientLimitsReader } from '../../lib/store/client/limits';
import { Registrations } from '../../lib/store/client/registrations';
import { readLiveBatches } from '../../lib/store/expiry/live';
import { Redetections } from '../../lib/store/redetect/images';
import { readRunningRedetections } from '../../lib/store/redetect/running';
import type { LocalReconcileOptions } from '../bridge/reconcile';
import type { LocalFunctionSettings } from '../config';
import type { DetectorServer } from '../detector/server';
import { type DetectorEnvironment, detectorSettings } from '../detector/settings';
import { localDynamoClient } from '../dynamodb/dynamodb';
import { functionCredentials } from '../iam/iam';
import type { BatchHandler } from '../queue/options';
import type { LocalQueue } from '../queue/queue';
import { uploadsJobQueue } from './job-queues';

/** Something the stack started, closed at stop in reverse order. */
export interface Closable {
  name: string;
  close(): Promise<void>;
}

/**
 * A message the previous run was handling when it died may have left its batch's counters behind its records (a crash
 * between the two writes); its redelivery finds the record done and counts nothing. Once the queue has handled what
 * the journal gave back, each such batch goes to onStaleBatch, as the sweep's batches do.
 */
export function recountInterrupted(
  queue: LocalQueue,
  onStaleBatch: ((clientId: string, batchId: string) => Promise<void> | void) | undefined,
  log: (line: string) => void,
): void {
  const batches = batchesOfKeys(queue.interruptedBodies().flatMap((body) => keysInS3Message(body).map((object) => object.key)));
  if (!onStaleBatch || batches.length === 0) return;
  queue
    .whenIdle(10 * 60_000)
    .then(async () => {
      for (const { clientId, batchId } of batches) await onStaleBatch(clientId, batchId);
    })
    .catch((err: unknown) => log(`[stack] recounting interrupted batches failed: ${String(err)}`));
}

/**
 * By default a stale batch (interrupted by a crash, or found by the sweep) is recounted from its own records: without
 * transactions (dynalite) a crash between a record's write and its counter update leaves the counters behind.
 */
export function recounter(endpoint: string, tableName: string, started: Closable[]): (clientId: string, batchId: string) => Promise<void> {
  const client = localDynamoClient(endpoint);
  started.push({ name: 'recount client', close: async () => client.destroy() });
  const store = new BatchStore({ ddb: documentClientOf(client), tableName, transactions: false });
  return async (clientId, batchId) => {
    await store.recount(clientId, batchId);
  };
}

/**
 * The sweep's count check (lib/reconcile/batch-counts.ts), with the completion path of the ingest (the callback's first
 * attempt) for a batch it finds done, where the callbacks consumer runs in-process.
 */
export function countChecker(
  endpoint: string,
  tableName: string,
  callbacks: JobQueue | undefined,
  started: Closable[],
  log: (line: string) => void,
  pricePerImageUsd: number,
): () => Promise<CountCheckResult> {
  const client = localDynamoClient(endpoint);
  started.push({ name: 'count check client', close: async () => client.destroy() });
  const ddb = documentClientOf(client);
  const store = new BatchStore({
    ddb,
    tableName,
    transactions: false,
    ...(callbacks
      ? {
          onDone: completionHook({ callbacks }, pricePerImageUsd, (line, details) => log(`[reconcile] ${line} ${JSON.stringify(details)}`)),
        }
      : {}),
  });
  const seen = new Map<string, string>();
  return () =>
    checkBatchCounts(
      {
        batches: () => readLiveBatches({ ddb, tableName }, Math.floor(Date.now() / 1000)),
        store,
        seen,
        log: (line, details) => log(`[reconcile] ${line} ${JSON.stringify(details ?? {})}`),
      },
      { maxBatches: COUNT_CHECK_MAX_BATCHES },
    );
}

/** Summaries the count check reads per sweep. */
const COUNT_CHECK_MAX_BATCHES = 5_000;

/** The sweep's look after completion callbacks, sending to the in-process callbacks consumer (its env applied). */
export function callbackSweep(
  endpoint: string,
  table: string,
  callbacks: JobQueue,
  started: Closable[],
  settings: LocalFunctionSettings,
): NonNullable<LocalReconcileOptions['callbacks']> {
  // The reconcile function's work on AWS: it reads and stamps the batches as that function.
  const client = localDynamoClient(endpoint, { credentials: functionCredentials('reconcile') });
  started.push({ name: 'callback sweep client', close: async () => client.destroy() });
  return {
    deps: {
      owed: new CallbackRequeues({ ddb: documentClientOf(client), tableName: table }),
      callbacks,
      present: (batch) => presentBatch(batch, settings.pricePerImageUsd),
    },
    limits: callbackSweepLimits(settings.notify, settings.callbackGraceSeconds),
  };
}

/** Registers the demo client's key (only its hash is stored) and returns the key. */
export async function provisionDemoClient(endpoint: string, tableName: string, key: string): Promise<string> {
  const client = localDynamoClient(endpoint);
  try {
    return await registerApiKey(new Registrations({ ddb: documentClientOf(client), tableName }), 'demo', key);
  } finally {
    client.destroy();
  }
}

/** A random secret made once per data dir, so that what it signs (or opens) stays valid across restarts. */
export async function localSecret(file: string, make: () => string = () => randomBytes(32).toString('hex')): Promise<string> {
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = make();
  await writeFile(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** Closes in reverse start order: intake first (notifications, API), the stores last. */
export async function closeAll(started: Closable[]): Promise<void> {
  for (const service of started.splice(0).reverse()) {
    try {
      await service.close();
    } catch (err) {
      console.warn(`[stack] closing ${service.name} failed: ${String(err)}`);
    }
  }
}

// Modules other engineers write; resolved by path so the stack runs (and type-checks) before they exist.
export const ROOT = path.join(__dirname, '..', '..');
const moduleExists = (relative: string) => ['.ts', '.js'].some((ext) => existsSync(path.join(ROOT, relative + ext)));

export async function loadIngestHandler(wiring: IngestWiring): Promise<BatchHandler> {
  const { createIngestHandler } = await import('../../functions/ingest/app');
  return createIngestHandler(wiring);
}

export async function startDetector(
  host: string,
  port: number,
  tuning: {
    /** What the environment says (local/config.ts detectorEnvironment, read by the stack's edge). */
    environment: DetectorEnvironment;
    throttleRate?: number;
    latencyMs?: number;
    workers?: number;
    memoEntries?: number;
    s3: S3Client;
    authorize?: (authorization: string | undefined) => Promise<string | undefined>;
  },
): Promise<DetectorServer | undefined> {
  const relative = 'local/detector/server';
  if (!moduleExists(relative)) return undefined;
  const mod = (await import(path.join(ROOT, relative))) as typeof import('../detector/server');
  const { environment, throttleRate, latencyMs, workers, ...rest } = tuning;
  return mod.startDetectorServer({ host, port, settings: detectorSettings(environment, { throttleRate, latencyMs, workers }), ...rest });
}

/**
 * The sweep's look after re-detection runs (lib/reconcile/redetect-runs.ts): a start whose pager stopped is paged on,
 * owed images in no one's hands are queued again on the bridge, a run owing nothing ends (with its completion hook,
 * where the callbacks consumer runs in-process).
 */
export function redetectSweep(
  endpoint: string,
  tableName: string,
  bridge: LocalQueue,
  callbacks: JobQueue | undefined,
  started: Closable[],
  log: (line: string) => void,
  settings: LocalFunctionSettings & { graceMs: number; runsIndexed: boolean },
): () => Promise<RedetectSweepResult> {
  const client = localDynamoClient(endpoint);
  started.push({ name: 're-detect sweep client', close: async () => client.destroy() });
  const ddb = documentClientOf(client);
  const sweepLog = (line: string, details?: Record<string, unknown>) => log(`[reconcile] ${line} ${JSON.stringify(details ?? {})}`);
  const limits = new ClientLimitsReader({ ddb, tableName, ...settings.clientLimits });
  const onDone = callbacks ? completionHook({ callbacks }, settings.pricePerImageUsd, sweepLog) : undefined;
  const sweep = redetectSweepOf({
    redetections: new Redetections(new BatchStore({ ddb, tableName, transactions: false }).counters, onDone),
    batches: () => readRunningRedetections({ ddb, tableName }),
    queue: uploadsJobQueue(bridge),
    limitsOf: (clientId) => limits.limitsOf(clientId),
    graceMs: settings.graceMs,
    ...settings.redetectPaging,
    log: sweepLog,
  });
  return () => sweep({ maxBatches: COUNT_CHECK_MAX_BATCHES, maxDurationMs: 20_000 });
}
