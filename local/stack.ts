// The local stack (DESIGN §4): s3rver, dynalite, the offline detector, the S3 → SQS → ingest bridge and the
// HTTP API, all on loopback, running the very handlers that Lambda runs. Used by `npm start`, the jest global
// setup and the benches.
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { connectS3Notifications } from './bridge';
import { startLocalReconciler, type LocalReconcileOptions, type LocalReconciler } from './bridge-reconcile';
import { startLocalExpiry, type LocalExpiry } from './expiry';
import { loadBucketLifecycleRules } from './s3-lifecycle';
import { presentBatch } from '../lib/api/present';
import { loadNotifyConfig } from '../lib/notify/schedule';
import { callbackSweepLimits } from '../lib/reconcile/callbacks';
import { callbackGraceSecondsFromEnv } from '../lib/reconcile/config';
import { startBridgeStatusServer, type BridgeStatusServer } from './bridge-status';
import { forgiveAfterCleanStop, markCleanStop } from './interrupted-attempts';
import { controlTokenFile, generateControlToken } from './control-token';
import { MetricTotals } from './metric-totals';
import { PowertoolsIngestMetrics } from '../lib/ingest/metrics';
import { LocalMessageVisibility } from '../lib/aws/message-visibility';
import type { IngestWiring } from '../functions/ingest/app';
import type { JobQueue } from '../lib/jobs/queue';
import { startLocalJobQueues, unconsumedJobQueues } from './job-queues';
import { LocalQueue, type BatchHandler, type LocalQueueOptions } from './queue';
import { describeS3Message, keysInS3Message, uploadGroupOf } from '../lib/reconcile/s3-event';
import { batchesOfKeys } from '../lib/ingest/s3-key';
import { dataDirFromEnv, prepareDataDir } from './data-layout';
import { DiskFaults, isOutOfSpace, lowSpaceWarning, type DiskState } from './disk-space';
import { BatchStore } from '../lib/store/batch-store';
import { readLiveBatches } from '../lib/store/live-batches';
import { checkBatchCounts, type CountCheckResult } from '../lib/reconcile/batch-counts';
import { completionHook } from '../lib/notify/wiring';
import { localDynamoClient, startLocalDynamoDB, type LocalDynamoDB } from './dynamodb';
import { buildLocalEnv, LOCAL_ACCOUNT_ID, LOCAL_MAX_RECEIVE_COUNT, LOCAL_NAMES, portsFromEnv, type StackPorts } from './env';
import { apiFunctionSelector, loadApiFunctions, oneHandlerForAll, type ApiFunctionHandlers } from './api-functions';
import { startHttpGateway, type HttpApiHandler, type HttpGateway } from './http-gateway';
import { localS3Client, startLocalS3, type LocalS3 } from './s3';
import { applyBucketCors } from './s3-cors';
import type { S3Client } from '@aws-sdk/client-s3';
import { generateApiKey } from '../lib/auth/api-keys';
import { maxUploadBytes } from '../lib/config';
import { registerApiKey } from '../lib/auth/register';

export interface StackOptions {
  /** Where S3 objects, DynamoDB data, the queue's journal and the dead-letter file live (default ICECAT_DATA_DIR, else .data). */
  dataDir?: string;
  /** Ports to bind; 0 picks a free one. Unset ones come from ICECAT_*_PORT or the defaults. */
  ports?: Partial<StackPorts>;
  quiet?: boolean;
  /** The SQS handler the bridge invokes (default: functions/ingest/handler). */
  ingestHandler?: BatchHandler;
  /**
   * One handler for every HTTP API request (default: each API function's own handler, chosen per request as API
   * Gateway routes it; lib/api/functions.ts); false serves no API.
   */
  apiHandler?: HttpApiHandler | false;
  /** Start the local Rekognition endpoint (default true); `workers`: its pool's size (default ICECAT_DETECTOR_WORKERS, else one per core). */
  detector?: boolean | { throttleRate?: number; latencyMs?: number; workers?: number };
  /** An external DynamoDB (e.g. DynamoDB Local) instead of dynalite (default ICECAT_DYNAMODB_ENDPOINT). */
  dynamodbEndpoint?: string;
  /** Bridge tuning (batch size, window, concurrency, retries). */
  bridge?: Partial<Omit<LocalQueueOptions, 'handler'>>;
  /**
   * The reconciliation sweep: at start, then every intervalMs (default ICECAT_RECONCILE_INTERVAL_SECONDS, 60 s),
   * objects under uploads/ older than graceMs (ICECAT_RECONCILE_GRACE_SECONDS, 10 s) and not in the queue are queued
   * again; false runs none.
   */
  reconcile?: false | { intervalMs?: number; graceMs?: number };
  /**
   * The expiry sweep (local/expiry.ts): at start, then every intervalMs (default ICECAT_EXPIRY_INTERVAL_SECONDS, 60 s),
   * expired batches are erased as on AWS; `now` is its clock. False runs none; a stack whose environment is not
   * applied runs none either (the erase consumer runs in-process only then).
   */
  expiry?: false | { intervalMs?: number; now?: () => number };
  /**
   * Called for each batch the sweep queued objects of again, and for each batch whose handling the previous run's
   * death cut short (once the journal's messages are handled): its counters may need a recount.
   */
  onStaleBatch?(clientId: string, batchId: string): Promise<void> | void;
  /** How long stop() lets batches in flight finish before leaving them to the journal (default 5 s). */
  drainTimeoutMs?: number;
  /** Set the stack's environment on process.env for in-process handlers (default true; restored at stop). */
  applyEnv?: boolean;
}

export interface StackEndpoints {
  api?: string;
  s3: string;
  dynamodb: string;
  rekognition?: string;
  bridge: string;
}

export interface Stack {
  env: Record<string, string>;
  endpoints: StackEndpoints;
  dataDir: string;
  bucket: string;
  table: string;
  dlqFile: string;
  /** The queue's journal: every message sent and not yet deleted. */
  journalFile: string;
  /** The demo client's API key, when the stack provisioned one (DESIGN §4). */
  demoApiKey?: string;
  bridge: LocalQueue;
  /** Runs a reconciliation sweep now (undefined when the stack runs none). */
  reconcile?: LocalReconciler;
  /** Runs an expiry sweep now (undefined when the stack runs none). */
  expiry?: LocalExpiry;
  /** Resolves once every upload event so far has been handled (or dead-lettered). */
  whenIdle(timeoutMs?: number): Promise<void>;
  /** The data dir's free space and the writes refused for lack of it (also on the status page). */
  disk(): DiskState;
  stop(): Promise<void>;
}

/** The deployed names this stack stands in for (serverless.yml: service icecat-wrangler, stage local). */
export const LOCAL_QUEUE_ARN = `arn:aws:sqs:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:icecat-wrangler-local-uploads`;

// Local event source mapping: as serverless.yml's (batch 10) but a shorter window so a lone upload is handled
// at once, 2 batches at a time (or one per detector worker when there are more, so each worker always has images
// waiting: an invocation has INGEST_PARALLELISM of them in flight), and a quicker path to the dead-letter list.
const BRIDGE_DEFAULTS: Partial<LocalQueueOptions> = {
  batchSize: 10,
  batchWindowMs: 100,
  maxConcurrency: 2,
  maxReceiveCount: LOCAL_MAX_RECEIVE_COUNT,
  retryBaseMs: 1000,
  retryMaxMs: 10_000,
  invocationTimeoutMs: 120_000,
  queueArn: LOCAL_QUEUE_ARN,
  functionName: 'icecat-wrangler-local-ingest',
};

interface Closable {
  name: string;
  close(): Promise<void>;
}

interface DetectorServer {
  url: string;
  port: number;
  workers: number;
  close(): Promise<void>;
}

export class StackStartError extends Error {
  override name = 'StackStartError';
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dataDir = opts.dataDir === undefined ? dataDirFromEnv() : path.resolve(opts.dataDir);
  const ports: StackPorts = { ...portsFromEnv(), ...opts.ports };
  const host = LOCAL_NAMES.host;
  const quiet = opts.quiet ?? false;
  const log = quiet ? () => undefined : (line: string) => console.log(line);
  const dynamodbEndpoint = opts.dynamodbEndpoint ?? (process.env.ICECAT_DYNAMODB_ENDPOINT || undefined);
  const dlqFile = path.join(dataDir, 'dlq.jsonl');
  const journalFile = path.join(dataDir, 'queue.journal');
  const started: Closable[] = [];
  const previousEnv = new Map<string, string | undefined>();

  // Handlers are loaded only once process.env holds the stack's endpoints (they read it at import).
  let ingest: BatchHandler | undefined;
  let apiFunctions: ApiFunctionHandlers | undefined;

  try {
    await prepareDataDir(dataDir, log);
    // A full disk is a fault, not a crash: each stand-in refuses the write with its service's error and reports it here.
    const disk = new DiskFaults(dataDir, quiet ? () => undefined : (line) => console.warn(line));
    const lowSpace = lowSpaceWarning(dataDir);
    if (lowSpace) log(lowSpace);

    const s3: LocalS3 = await startLocalS3({
      host,
      port: ports.s3,
      dataDir,
      silent: true,
      onWriteFault: (err) => disk.report('s3', err),
      // A POST form declaring a larger body than the API's forms allow is refused before it is read.
      maxFormFileBytes: maxUploadBytes(),
    });
    started.push({ name: 's3', close: () => s3.close() });
    const s3Client = localS3Client(s3.url);

    const dynamodb: LocalDynamoDB = await startLocalDynamoDB({
      host,
      port: ports.dynamodb,
      dataDir,
      endpoint: dynamodbEndpoint,
      quiet,
      onWriteFault: (err) => (isOutOfSpace(err) ? disk.report('dynamodb', err) : console.error('[dynamodb] request failed:', err)),
    });
    started.push({ name: 'dynamodb', close: () => dynamodb.close() });
    // Closed after the detector and before the stores: invocations that outlived the queue's drain fail fast once the
    // detector is gone, and must be over before DynamoDB closes (dynalite throws, uncaught, under a running operation).
    const inFlight: { queue?: LocalQueue } = {};
    started.push({ name: 'ingest in flight', close: async () => inFlight.queue?.settled(10_000) });

    let detector: DetectorServer | undefined;
    if (opts.detector !== false) {
      // Its own S3 client for S3Object input, so it reads this stack's S3 whatever process.env holds.
      detector = await startDetector(host, ports.rekognition, {
        ...(typeof opts.detector === 'object' ? opts.detector : {}),
        s3: s3Client,
      });
      if (detector) {
        const running = detector;
        started.push({ name: 'detector', close: () => running.close() });
      } else if (!quiet) {
        console.warn('[stack] local/detector/server.ts is missing: no local Rekognition endpoint');
      }
    }

    // What the ingest's EMF lines say, summed for the status page; the lines still go to stdout as on AWS (not when quiet).
    const metricTotals = new MetricTotals();
    // Where the ingest's ChangeMessageVisibility calls reach the bridge: given to both.
    const visibility = new LocalMessageVisibility();
    // Paused until the ingest handler is loaded: the journal's messages would otherwise burn their receives on it.
    const bridge = new LocalQueue({
      ...BRIDGE_DEFAULTS,
      maxConcurrency: Math.max(BRIDGE_DEFAULTS.maxConcurrency ?? 1, detector?.workers ?? 0),
      paused: true,
      dlqFile,
      journalFile,
      describe: describeS3Message,
      keysOf: (body) => keysInS3Message(body).map((object) => object.key),
      // The router's job on AWS (functions/route): each upload's message is in its client's group (docs/design.md §11).
      groupOf: uploadGroupOf,
      log: quiet ? () => undefined : (line) => console.warn(line),
      ...opts.bridge,
      journal: {
        ...opts.bridge?.journal,
        onWriteFault: (err) => (isOutOfSpace(err) ? disk.report('queue', err) : console.error('[queue] journal write failed:', err)),
      },
      visibility,
      handler: (event, context) => (ingest as BatchHandler)(event, context),
    });
    // Closed after the queue (closing runs in reverse): an upload while batches drain is still journaled.
    const notifications: { disconnect?: () => void } = {};
    started.push({ name: 'notifications', close: async () => notifications.disconnect?.() });
    started.push({ name: 'bridge', close: () => bridge.stop(opts.drainTimeoutMs ?? 5000) });
    inFlight.queue = bridge;

    // The sweep starts last (below); the status server can ask for one before that.
    let reconciler: LocalReconciler | undefined;
    const status: BridgeStatusServer = await startBridgeStatusServer(bridge, {
      host,
      port: ports.bridge,
      controlToken: await localSecret(controlTokenFile(dataDir), generateControlToken),
      reconcile: async () => {
        if (!reconciler) throw new StackStartError('the reconciliation sweep is not running');
        return reconciler.sweep();
      },
      metrics: () => metricTotals.snapshot(),
      disk: () => disk.state(),
    });
    started.push({ name: 'bridge status', close: () => status.close() });

    let gateway: HttpGateway | undefined;
    if (opts.apiHandler !== false) {
      gateway = await startHttpGateway({
        host,
        port: ports.api,
        selectFunction: apiFunctionSelector(() => apiFunctions, 'icecat-wrangler-local'),
      });
      const running = gateway;
      started.push({ name: 'api', close: () => running.close() });
    }

    // The web app's uploads (POST) and export downloads (GET) are cross-origin: the bucket answers them as the
    // deployed bucket's CORS rules say, the web app's origin being the API's, known once it listens.
    await applyBucketCors(s3Client, s3.bucket, ROOT, `http://${host}:${gateway?.port ?? ports.api}`);

    const bound: StackPorts = {
      api: gateway?.port ?? ports.api,
      s3: s3.port,
      dynamodb: dynamodb.port,
      rekognition: detector?.port ?? ports.rekognition,
      bridge: status.port,
    };
    const env = buildLocalEnv(bound, {
      dataDir,
      host,
      dynamodbEndpoint: dynamodb.external ? dynamodb.url : undefined,
      cursorSecret: process.env.CURSOR_SECRET || (await localSecret(path.join(dataDir, 'cursor-secret'))),
      callbackSigningKey: process.env.CALLBACK_SIGNING_KEY || (await localSecret(path.join(dataDir, 'callback-signing-key'))),
      claimLeaseSeconds: process.env.CLAIM_LEASE_SECONDS || undefined,
      maxAttempts: process.env.INGEST_MAX_ATTEMPTS || undefined,
      callbackLoopbackPorts: process.env.CALLBACK_LOOPBACK_PORTS,
    });
    if (opts.applyEnv !== false) {
      for (const [name, value] of Object.entries(env)) {
        previousEnv.set(name, process.env[name]);
        process.env[name] = value;
      }
      if (quiet && process.env.POWERTOOLS_LOG_LEVEL === undefined) {
        previousEnv.set('POWERTOOLS_LOG_LEVEL', undefined);
        process.env.POWERTOOLS_LOG_LEVEL = 'WARN';
      }
    }

    // The erase and callbacks functions, consuming their queues in-process (local/job-queues.ts). Like the API's, they
    // read their configuration when built, so only a stack whose environment is applied runs them; without them a
    // send to either queue fails, as a send to a queue with no consumer would.
    const jobs = opts.applyEnv !== false ? await startLocalJobQueues(ROOT) : unconsumedJobQueues();
    started.push({ name: 'job consumers', close: async () => jobs.close() });
    ingest =
      opts.ingestHandler ??
      (await loadIngestHandler({
        callbacks: jobs.callbacks,
        visibility,
        // What the ingest's EMF lines say goes to the status page's totals, and to stdout as on AWS (not when quiet).
        metrics: PowertoolsIngestMetrics.listenedBy({ listener: (doc) => metricTotals.add(doc), echo: !quiet }),
      }));
    // Only a clean stop hands the attempts of the uploads it cut short back: after a crash they stay counted.
    const interrupted = bridge.interruptedBodies();
    const forgiven = await forgiveAfterCleanStop(dataDir, interrupted, dynamodb.url, dynamodb.table.name).catch((err: unknown) => {
      log(`[stack] taking back the attempts of interrupted uploads failed: ${String(err)}`);
      return 0;
    });
    if (interrupted.length > 0 && forgiven === 0) log(`[stack] the previous run did not stop cleanly: the attempts of ${interrupted.length} interrupted message(s) stay counted`);
    bridge.resume();
    const onStaleBatch = opts.onStaleBatch ?? recounter(dynamodb.url, dynamodb.table.name, started);
    recountInterrupted(bridge, onStaleBatch, log);
    if (opts.apiHandler !== false) {
      apiFunctions = opts.apiHandler ? oneHandlerForAll(opts.apiHandler) : await loadApiFunctions(ROOT, jobs);
    }

    // ---- Clients (DESIGN §4: a client `demo` exists from the start): ICECAT_DEMO_API_KEY, else the data dir's own
    // key, made at the first start and kept, so a restart does not hand out (and leave valid) a new one each time.
    const demoApiKey = await provisionDemoClient(
      dynamodb.url,
      dynamodb.table.name,
      process.env.ICECAT_DEMO_API_KEY || (await localSecret(path.join(dataDir, 'demo-api-key'), generateApiKey)),
    );

    notifications.disconnect = connectS3Notifications(s3, bridge, { bucket: s3.bucket, prefix: 'uploads/', log });

    if (opts.reconcile !== false) {
      reconciler = startLocalReconciler({
        s3: s3Client,
        bucket: s3.bucket,
        region: LOCAL_NAMES.region,
        queue: bridge,
        ...opts.reconcile,
        onStaleBatch,
        // It reads the batches-expiring index, which a table made before it lacks (the expiry sweep says so).
        ...(dynamodb.table.missingIndexes.includes('batches-expiring')
          ? {}
          : { checkCounts: countChecker(dynamodb.url, dynamodb.table.name, opts.applyEnv !== false ? jobs.callbacks : undefined, started, log) }),
        ...(opts.applyEnv !== false ? { callbacks: callbackSweep(dynamodb.url, dynamodb.table.name, jobs.callbacks, started) } : {}),
        log: quiet ? () => undefined : (line) => console.warn(line),
      });
      const running = reconciler;
      started.push({ name: 'reconcile', close: () => running.stop() });
    }

    let expiry: LocalExpiry | undefined;
    if (opts.expiry !== false && opts.applyEnv !== false && dynamodb.table.missingIndexes.includes('batches-expiring')) {
      log('[expiry] no expiry sweep: the table predates the batches-expiring index, so expired batches are hidden but not erased');
    } else if (opts.expiry !== false && opts.applyEnv !== false) {
      const client = localDynamoClient(dynamodb.url);
      started.push({ name: 'expiry client', close: async () => client.destroy() });
      expiry = startLocalExpiry({
        ddb: DynamoDBDocumentClient.from(client),
        tableName: dynamodb.table.name,
        erasures: jobs.erasures,
        // The local S3 has no lifecycle: the deployed bucket's rules, applied as S3 would.
        lifecycle: { s3: s3Client, bucket: s3.bucket, rules: await loadBucketLifecycleRules(ROOT), keep: (key) => bridge.hasMessageFor(key) },
        ...opts.expiry,
        log: quiet ? () => undefined : (line) => console.warn(line),
      });
      const running = expiry;
      started.push({ name: 'expiry', close: () => running.stop() });
    }

    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        await closeAll(started);
        await markCleanStop(dataDir).catch((err: unknown) => log(`[stack] the mark of a clean stop was not written: ${String(err)}`));
        for (const [name, value] of previousEnv) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      })());

    return {
      env,
      endpoints: {
        api: gateway?.url,
        s3: s3.url,
        dynamodb: dynamodb.url,
        rekognition: detector?.url,
        bridge: status.url,
      },
      dataDir,
      bucket: s3.bucket,
      table: dynamodb.table.name,
      dlqFile,
      journalFile,
      demoApiKey,
      bridge,
      reconcile: reconciler,
      expiry,
      whenIdle: (timeoutMs) => bridge.whenIdle(timeoutMs),
      disk: () => disk.state(),
      stop,
    };
  } catch (err) {
    await closeAll(started);
    for (const [name, value] of previousEnv) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    throw err;
  }
}

/**
 * A message the previous run was handling when it died may have left its batch's counters behind its records (a crash
 * between the two writes); its redelivery finds the record done and counts nothing. Once the queue has handled what
 * the journal gave back, each such batch goes to onStaleBatch, as the sweep's batches do.
 */
function recountInterrupted(queue: LocalQueue, onStaleBatch: StackOptions['onStaleBatch'], log: (line: string) => void): void {
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
function recounter(
  endpoint: string,
  tableName: string,
  started: Closable[],
): (clientId: string, batchId: string) => Promise<void> {
  const client = localDynamoClient(endpoint);
  started.push({ name: 'recount client', close: async () => client.destroy() });
  const store = new BatchStore({ ddb: DynamoDBDocumentClient.from(client), tableName, transactions: false });
  return async (clientId, batchId) => {
    await store.recount(clientId, batchId);
  };
}

/**
 * The sweep's count check (lib/reconcile/batch-counts.ts), with the completion path of the ingest (the callback's first
 * attempt) for a batch it finds done, where the callbacks consumer runs in-process.
 */
function countChecker(endpoint: string, tableName: string, callbacks: JobQueue | undefined, started: Closable[], log: (line: string) => void): () => Promise<CountCheckResult> {
  const client = localDynamoClient(endpoint);
  started.push({ name: 'count check client', close: async () => client.destroy() });
  const ddb = DynamoDBDocumentClient.from(client);
  const store = new BatchStore({ ddb, tableName, transactions: false, ...(callbacks ? { onDone: completionHook({ callbacks }, (line, details) => log(`[reconcile] ${line} ${JSON.stringify(details)}`)) } : {}) });
  const seen = new Map<string, string>();
  return () =>
    checkBatchCounts(
      { batches: () => readLiveBatches({ ddb, tableName }, Math.floor(Date.now() / 1000)), store, seen, log: (line, details) => log(`[reconcile] ${line} ${JSON.stringify(details ?? {})}`) },
      { maxBatches: COUNT_CHECK_MAX_BATCHES },
    );
}

/** Summaries the count check reads per sweep. */
const COUNT_CHECK_MAX_BATCHES = 5_000;

/** The sweep's look after completion callbacks, sending to the in-process callbacks consumer (its env applied). */
function callbackSweep(endpoint: string, table: string, callbacks: JobQueue, started: Closable[]): NonNullable<LocalReconcileOptions['callbacks']> {
  const client = localDynamoClient(endpoint);
  started.push({ name: 'callback sweep client', close: async () => client.destroy() });
  return {
    deps: { ddb: DynamoDBDocumentClient.from(client), table, callbacks, present: presentBatch },
    limits: callbackSweepLimits(loadNotifyConfig(), callbackGraceSecondsFromEnv()),
  };
}

/** Registers the demo client's key (only its hash is stored) and returns the key. */
async function provisionDemoClient(endpoint: string, tableName: string, key: string): Promise<string> {
  const client = localDynamoClient(endpoint);
  try {
    return await registerApiKey(DynamoDBDocumentClient.from(client), tableName, 'demo', key);
  } finally {
    client.destroy();
  }
}

/** A random secret made once per data dir, so that what it signs (or opens) stays valid across restarts. */
async function localSecret(file: string, make: () => string = () => randomBytes(32).toString('hex')): Promise<string> {
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
async function closeAll(started: Closable[]): Promise<void> {
  for (const service of started.splice(0).reverse()) {
    try {
      await service.close();
    } catch (err) {
      console.warn(`[stack] closing ${service.name} failed: ${String(err)}`);
    }
  }
}

// Modules other engineers write; resolved by path so the stack runs (and type-checks) before they exist.
const ROOT = path.join(__dirname, '..');
const moduleExists = (relative: string) => ['.ts', '.js'].some((ext) => existsSync(path.join(ROOT, relative + ext)));

async function loadIngestHandler(wiring: IngestWiring): Promise<BatchHandler> {
  const { createIngestHandler } = await import('../functions/ingest/app');
  return createIngestHandler(wiring);
}

async function startDetector(
  host: string,
  port: number,
  tuning: { throttleRate?: number; latencyMs?: number; workers?: number; s3: S3Client },
): Promise<DetectorServer | undefined> {
  const relative = 'local/detector/server';
  if (!moduleExists(relative)) return undefined;
  const mod = (await import(path.join(ROOT, relative))) as {
    startDetectorServer(opts: {
      host: string;
      port: number;
      throttleRate?: number;
      latencyMs?: number;
      workers?: number;
      s3: S3Client;
    }): Promise<DetectorServer>;
  };
  return mod.startDetectorServer({ host, port, ...tuning });
}
