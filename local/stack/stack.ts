// The local stack (DESIGN §4): s3rver, dynalite, the offline detector, the S3 → SQS → ingest bridge and the
// HTTP API, all on loopback, running the very handlers that Lambda runs. Used by `npm start`, the jest global
// setup and the benches.
import path from 'node:path';
import { generateApiKey } from '../../lib/auth/api-keys';
import { LocalMessageVisibility } from '../../lib/aws/message-visibility';
import { type IngestConfig, maxUploadBytes } from '../../lib/config';
import { PowertoolsIngestMetrics } from '../../lib/ingest/metrics';
import { describeS3Message, keysInS3Message, uploadGroupOf } from '../../lib/reconcile/s3-event';
import { connectS3Notifications } from '../bridge/bridge';
import { controlTokenFile, generateControlToken } from '../bridge/control-token';
import { MetricTotals } from '../bridge/metric-totals';
import { type BridgeStatusServer, startBridgeStatusServer } from '../bridge/status';
import {
  applyEnv,
  detectorEnvironment,
  type LocalFunctionSettings,
  loadLocalConfig,
  loadLocalFunctionSettings,
  restoreEnv,
} from '../config';
import { buildLocalEnv, LOCAL_ACCOUNT_ID, LOCAL_MAX_RECEIVE_COUNT, LOCAL_NAMES, type StackPorts } from '../contract';
import type { DetectorServer } from '../detector/server';
import { defaultDetectorWorkers, MAX_DETECTOR_WORKERS } from '../detector/settings';
import { DiskFaults, isOutOfSpace, lowSpaceWarning } from '../disk-space';
import { type LocalDynamoDB, startLocalDynamoDB } from '../dynamodb/dynamodb';
import { LocalStackError } from '../errors';
import { apiFunctionTargets, loadApiFunctions, oneHandlerForAll } from '../gateway/api-functions';
import { type HttpGateway, startHttpGateway } from '../gateway/gateway';
import { functionTimeoutMs, type HttpApiTemplate, loadHttpApiTemplate } from '../gateway/routes';
import type { BatchHandler, LocalQueueOptions } from '../queue/options';
import { LocalQueue } from '../queue/queue';
import { applyBucketCors } from '../s3/cors';
import { type LocalS3, localS3Client, startLocalS3 } from '../s3/s3';
import { prepareDataDir } from './data-layout';
import type { LocalExpiry } from './expiry';
import { detectorAuthorizer, loadIngestAs, stackIam } from './iam';
import { importUploadsQueue, startImportLister } from './import-lister';
import { forgiveAfterCleanStop, markCleanStop } from './interrupted-attempts';
import { type LocalJobQueues, startLocalJobQueues, unconsumedJobQueues, uploadsJobQueue } from './job-queues';
import type { Intake, Starting, Stores } from './parts';
import { recordDetectorModel } from './record-detector-model';
import { closeAll, localSecret, provisionDemoClient, ROOT, recounter, recountInterrupted, startDetector } from './services';
import { startExpiry, startReconciler } from './sweeps';
import type { Stack, StackOptions } from './types';

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
  queueArn: LOCAL_QUEUE_ARN,
  functionName: 'icecat-wrangler-local-ingest',
};

export class StackStartError extends LocalStackError {
  override name = 'StackStartError';
  readonly code = 'stack_start_failed';
}

/** What the stack's start shares between its steps. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const quiet = opts.quiet ?? false;
  // The stack's edge: what it reads of the operator's environment, read here, once, and handed to its parts.
  const config = loadLocalConfig();
  const { settings } = config;
  const s: Starting = {
    opts,
    dataDir: opts.dataDir === undefined ? config.dataDir : path.resolve(opts.dataDir),
    ports: { ...config.ports, ...opts.ports },
    host: LOCAL_NAMES.host,
    quiet,
    log: quiet ? () => undefined : (line: string) => console.log(line),
    started: [],
    previousEnv: new Map(),
    settings,
    config,
    iam: stackIam(settings.rolesFile),
    late: {},
  };
  try {
    const stores = await startStores(s);
    const intake = await startIntake(s, stores);
    const env = await applyStackEnv(s, stores, intake);
    const fn = loadLocalFunctionSettings(opts.applyEnv !== false);
    const { jobs, onStaleBatch } = await startConsumers(s, stores, intake, fn);

    // ---- Clients (DESIGN §4: a client `demo` exists from the start): ICECAT_DEMO_API_KEY, else the data dir's own
    // key, made at the first start and kept, so a restart does not hand out (and leave valid) a new one each time.
    const demoApiKey = await provisionDemoClient(
      stores.dynamodb.url,
      stores.dynamodb.table.name,
      s.settings.demoApiKey ?? (await localSecret(path.join(s.dataDir, 'demo-api-key'), generateApiKey)),
    );

    intake.notifications.disconnect = connectS3Notifications(stores.s3, intake.bridge, {
      bucket: stores.s3.bucket,
      prefix: 'uploads/',
      log: s.log,
    });
    s.late.reconciler = startReconciler(s, stores, intake.bridge, jobs, onStaleBatch, fn);
    const expiry = await startExpiry(s, stores, intake.bridge, jobs);
    return stackOf(s, stores, intake, env, demoApiKey, expiry);
  } catch (err) {
    await closeAll(s.started);
    restoreEnv(s.previousEnv);
    throw err;
  }
}

/** The data dir, then S3, DynamoDB and the detector. */
async function startStores({ opts, dataDir, ports, host, quiet, log, started, settings, config, iam }: Starting): Promise<Stores> {
  await prepareDataDir(dataDir, log);
  // A full disk is a fault, not a crash: each stand-in refuses the write with its service's error and reports it here.
  const disk = new DiskFaults(dataDir, quiet ? () => undefined : (line) => console.warn(line), config.lowSpaceBytes);
  const lowSpace = lowSpaceWarning(dataDir, config.lowSpaceBytes);
  if (lowSpace) log(lowSpace);

  const s3: LocalS3 = await startLocalS3({
    host,
    port: ports.s3,
    dataDir,
    silent: true,
    onWriteFault: (err) => disk.report('s3', err),
    // A POST form declaring a larger body than the API's forms allow is refused before it is read.
    maxFormFileBytes: maxUploadBytes(),
    iam,
  });
  started.push({ name: 's3', close: () => s3.close() });
  const s3Client = localS3Client(s3.url);

  const dynamodb: LocalDynamoDB = await startLocalDynamoDB({
    host,
    port: ports.dynamodb,
    dataDir,
    endpoint: opts.dynamodbEndpoint ?? settings.dynamodbEndpoint,
    quiet,
    iam,
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
      environment: detectorEnvironment(defaultDetectorWorkers(), MAX_DETECTOR_WORKERS),
      ...(typeof opts.detector === 'object' ? opts.detector : {}),
      s3: s3Client,
      authorize: detectorAuthorizer(iam),
    });
    if (detector) {
      const running = detector;
      started.push({ name: 'detector', close: () => running.close() });
    } else if (!quiet) {
      console.warn('[stack] local/detector/server.ts is missing: no local Rekognition endpoint');
    }
  }
  return { disk, s3, s3Client, dynamodb, inFlight, detector };
}

/** The bridge (paused), its status server, the HTTP API, and the bucket's CORS rules. */
async function startIntake(s: Starting, stores: Stores): Promise<Intake> {
  const { opts, dataDir, ports, host, started } = s;
  const { disk, s3, s3Client } = stores;
  // What the ingest's EMF lines say, summed for the status page; the lines still go to stdout as on AWS (not when quiet).
  const metricTotals = new MetricTotals();
  // Where the ingest's ChangeMessageVisibility calls reach the bridge: given to both.
  const visibility = new LocalMessageVisibility();
  // The functions' timeouts and the HTTP API's routes, as serverless.yml deploys them.
  const template = await loadHttpApiTemplate(ROOT);
  const bridge = startBridge(s, stores, visibility, template);
  // Closed after the queue (closing runs in reverse): an upload while batches drain is still journaled.
  const notifications: { disconnect?: () => void } = {};
  started.push({ name: 'notifications', close: async () => notifications.disconnect?.() });
  started.push({ name: 'bridge', close: () => bridge.stop(opts.drainTimeoutMs ?? 5000) });

  // The sweep starts last (startReconciler); the status server can ask for one before that.
  const status: BridgeStatusServer = await startBridgeStatusServer(bridge, {
    host,
    port: ports.bridge,
    controlToken: await localSecret(controlTokenFile(dataDir), generateControlToken),
    reconcile: async () => {
      if (!s.late.reconciler) throw new StackStartError('the reconciliation sweep is not running');
      return s.late.reconciler.sweep();
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
      routes: template.routes,
      target: apiFunctionTargets(() => s.late.apiFunctions, 'icecat-wrangler-local', template.functions),
    });
    const running = gateway;
    started.push({ name: 'api', close: () => running.close() });
  }

  // The web app's uploads (POST) and export downloads (GET) are cross-origin: the bucket answers them as the
  // deployed bucket's CORS rules say, the web app's origin being the API's, known once it listens.
  await applyBucketCors(s3Client, s3.bucket, ROOT, `http://${host}:${gateway?.port ?? ports.api}`);
  return { metricTotals, visibility, bridge, notifications, status, gateway };
}

/** The queue standing in for SQS and the event source mapping, paused until the ingest handler is loaded. */
function startBridge(
  s: Starting,
  { disk, inFlight, detector }: Stores,
  visibility: LocalMessageVisibility,
  template: HttpApiTemplate,
): LocalQueue {
  const { opts, dataDir, quiet } = s;
  // Paused until the ingest handler is loaded: the journal's messages would otherwise burn their receives on it.
  const bridge = new LocalQueue({
    ...BRIDGE_DEFAULTS,
    maxConcurrency: Math.max(BRIDGE_DEFAULTS.maxConcurrency ?? 1, detector?.workers ?? 0),
    // The ingest function's timeout: an invocation past it fails as Lambda's does, and its messages come back.
    invocationTimeoutMs: functionTimeoutMs(template, 'ingest'),
    paused: true,
    dlqFile: path.join(dataDir, 'dlq.jsonl'),
    journalFile: path.join(dataDir, 'queue.journal'),
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
    handler: (event, context) => (s.late.ingest as BatchHandler)(event, context),
  });
  inFlight.queue = bridge;
  return bridge;
}

/** The stack's environment, built once every port is bound, and set on process.env unless applyEnv is false. */
async function applyStackEnv(
  { opts, dataDir, ports, host, quiet, previousEnv, settings }: Starting,
  { s3, dynamodb, detector }: Stores,
  { status, gateway }: Intake,
): Promise<Record<string, string>> {
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
    cursorSecret: settings.cursorSecret ?? (await localSecret(path.join(dataDir, 'cursor-secret'))),
    callbackSigningKey: settings.callbackSigningKey ?? (await localSecret(path.join(dataDir, 'callback-signing-key'))),
    claimLeaseSeconds: settings.claimLeaseSeconds,
    maxAttempts: settings.maxAttempts,
    callbackLoopbackPorts: settings.callbackLoopbackPorts,
  });
  if (opts.applyEnv !== false) {
    // Written, not read: the handlers run in-process read it when built, as Lambda's do (local/config.ts).
    applyEnv(env, previousEnv);
    if (quiet && !settings.logLevelSet) applyEnv({ POWERTOOLS_LOG_LEVEL: 'WARN' }, previousEnv);
  }
  return env;
}

/**
 * The erase and callbacks consumers, the ingest handler (then the bridge resumes) and the API's functions. Like the
 * API's, the erase and callbacks functions read their configuration when built, so only a stack whose environment is
 * applied runs them (local/stack/job-queues.ts); without them a send to either queue fails, as a send to a queue with no
 * consumer would.
 */
async function startConsumers(
  s: Starting,
  { dynamodb, detector }: Stores,
  { bridge, visibility, metricTotals }: Intake,
  fn: LocalFunctionSettings,
): Promise<{ jobs: LocalJobQueues; onStaleBatch: NonNullable<StackOptions['onStaleBatch']> }> {
  const { opts, dataDir, quiet, log, started } = s;
  const jobs = opts.applyEnv !== false ? await startLocalJobQueues(ROOT, s.iam) : unconsumedJobQueues();
  started.push({ name: 'job consumers', close: async () => jobs.close() });
  s.late.ingest =
    opts.ingestHandler ??
    (await loadIngestAs(s.iam, {
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
  if (interrupted.length > 0 && forgiven === 0)
    log(`[stack] the previous run did not stop cleanly: the attempts of ${interrupted.length} interrupted message(s) stay counted`);
  // The detector's model is the one answering now before the first upload (local/stack/record-detector-model.ts).
  if (detector) {
    const model = await recordDetectorModel(`http://${s.host}:${detector.port}`, dynamodb.url, dynamodb.table.name);
    log(`[stack] the detector answers with ${model.name} ${model.version}`);
  }
  bridge.resume();
  if (fn.ingest) await resumeImports(jobs, bridge, log, { ...fn, ingest: fn.ingest });
  const onStaleBatch = opts.onStaleBatch ?? recounter(dynamodb.url, dynamodb.table.name, started);
  recountInterrupted(bridge, onStaleBatch, log);
  if (opts.apiHandler !== false) {
    s.late.apiFunctions = opts.apiHandler
      ? oneHandlerForAll(opts.apiHandler)
      : await loadApiFunctions(
          ROOT,
          {
            ...jobs,
            redetects: uploadsJobQueue(bridge),
            imports: { listings: jobs.listings, uploads: importUploadsQueue(bridge) },
          },
          s.iam,
        );
  }
  return { jobs, onStaleBatch };
}

/** The local lister of imports on its job queue, and every import a previous run left listing queued again. */
async function resumeImports(
  jobs: LocalJobQueues,
  bridge: LocalQueue,
  log: (line: string) => void,
  fn: LocalFunctionSettings & { ingest: IngestConfig },
): Promise<void> {
  const lister = startImportLister(jobs.listings, importUploadsQueue(bridge), { log }, fn);
  const resumed = await lister.resume().catch((err: unknown) => {
    log(`[stack] resuming imports failed: ${String(err)}`);
    return 0;
  });
  if (resumed > 0) log(`[stack] ${resumed} import(s) resumed listing`);
}

/** The running stack, whose stop closes what started in reverse order and puts the environment back. */
function stackOf(
  { dataDir, log, started, previousEnv, late }: Starting,
  { disk, s3, dynamodb, detector }: Stores,
  { bridge, status, gateway }: Intake,
  env: Record<string, string>,
  demoApiKey: string,
  expiry: LocalExpiry | undefined,
): Stack {
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await closeAll(started);
      await markCleanStop(dataDir).catch((err: unknown) => log(`[stack] the mark of a clean stop was not written: ${String(err)}`));
      restoreEnv(previousEnv);
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
    dlqFile: path.join(dataDir, 'dlq.jsonl'),
    journalFile: path.join(dataDir, 'queue.journal'),
    demoApiKey,
    bridge,
    reconcile: late.reconciler,
    expiry,
    whenIdle: (timeoutMs) => bridge.whenIdle(timeoutMs),
    disk: () => disk.state(),
    stop,
  };
}
