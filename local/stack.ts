// The local stack (DESIGN §4): s3rver, dynalite, the offline detector, the S3 → SQS → ingest bridge and the
// HTTP API, all on loopback, running the very handlers that Lambda runs. Used by `npm start`, the jest global
// setup and the benches.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  connectS3Notifications,
  describeS3Body,
  QueueBridge,
  startBridgeStatusServer,
  type BatchHandler,
  type BridgeStatusServer,
  type QueueBridgeOptions,
} from './bridge';
import { prepareDataDir } from './data-layout';
import { startLocalDynamoDB, type LocalDynamoDB } from './dynamodb';
import { buildLocalEnv, LOCAL_ACCOUNT_ID, LOCAL_NAMES, portsFromEnv, type StackPorts } from './env';
import { apiFunctionSelector, loadApiFunctions, oneHandlerForAll, type ApiFunctionHandlers } from './api-functions';
import { startHttpGateway, type HttpApiHandler, type HttpGateway } from './http-gateway';
import { startLocalS3, type LocalS3 } from './s3';
import { S3Client } from '@aws-sdk/client-s3';
import { generateApiKey } from '../lib/auth/api-keys';
import { registerApiKey } from '../lib/auth/register';
import { registerLocalConsumer, type LocalConsumer } from '../lib/jobs/queue';

export interface StackOptions {
  /** Where S3 objects, DynamoDB data and the dead-letter file live (default ICECAT_DATA_DIR, else .data). */
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
  /** Start the local Rekognition endpoint (default true). */
  detector?: boolean | { throttleRate?: number; latencyMs?: number };
  /** An external DynamoDB (e.g. DynamoDB Local) instead of dynalite (default ICECAT_DYNAMODB_ENDPOINT). */
  dynamodbEndpoint?: string;
  /** Bridge tuning (batch size, window, concurrency, retries). */
  bridge?: Partial<Omit<QueueBridgeOptions, 'handler'>>;
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
  /** The demo client's API key, when the stack provisioned one (DESIGN §4). */
  demoApiKey?: string;
  bridge: QueueBridge;
  /** Resolves once every upload event so far has been handled (or dead-lettered). */
  whenIdle(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The deployed names this stack stands in for (serverless.yml: service icecat-wrangler, stage local). */
export const LOCAL_QUEUE_ARN = `arn:aws:sqs:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:icecat-wrangler-local-uploads`;

// Local event source mapping: as serverless.yml's (batch 10) but a shorter window so a lone upload is handled
// at once, 2 batches at a time (this machine's cores), and a quicker path to the dead-letter list.
const BRIDGE_DEFAULTS: Partial<QueueBridgeOptions> = {
  batchSize: 10,
  batchWindowMs: 100,
  maxConcurrency: 2,
  maxReceiveCount: 3,
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
  close(): Promise<void>;
}

export class StackStartError extends Error {
  override name = 'StackStartError';
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dataDir = path.resolve(opts.dataDir ?? process.env.ICECAT_DATA_DIR ?? '.data');
  const ports: StackPorts = { ...portsFromEnv(), ...opts.ports };
  const host = LOCAL_NAMES.host;
  const quiet = opts.quiet ?? false;
  const log = quiet ? () => undefined : (line: string) => console.log(line);
  const dynamodbEndpoint = opts.dynamodbEndpoint ?? (process.env.ICECAT_DYNAMODB_ENDPOINT || undefined);
  const dlqFile = path.join(dataDir, 'dlq.jsonl');
  const started: Closable[] = [];
  const previousEnv = new Map<string, string | undefined>();

  // Handlers are loaded only once process.env holds the stack's endpoints (they read it at import).
  let ingest: BatchHandler | undefined;
  let apiFunctions: ApiFunctionHandlers | undefined;

  try {
    await prepareDataDir(dataDir, log);

    const s3: LocalS3 = await startLocalS3({ host, port: ports.s3, dataDir, silent: true });
    started.push({ name: 's3', close: () => s3.close() });

    const dynamodb: LocalDynamoDB = await startLocalDynamoDB({
      host,
      port: ports.dynamodb,
      dataDir,
      endpoint: dynamodbEndpoint,
      quiet,
    });
    started.push({ name: 'dynamodb', close: () => dynamodb.close() });

    let detector: DetectorServer | undefined;
    if (opts.detector !== false) {
      // Its own S3 client for S3Object input, so it reads this stack's S3 whatever process.env holds.
      const detectorS3 = new S3Client({
        endpoint: s3.url,
        region: LOCAL_NAMES.region,
        credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
        forcePathStyle: true,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      detector = await startDetector(host, ports.rekognition, {
        ...(typeof opts.detector === 'object' ? opts.detector : {}),
        s3: detectorS3,
      });
      if (detector) {
        const running = detector;
        started.push({ name: 'detector', close: () => running.close() });
      } else if (!quiet) {
        console.warn('[stack] local/detector/server.ts is missing: no local Rekognition endpoint');
      }
    }

    const bridge = new QueueBridge({
      ...BRIDGE_DEFAULTS,
      dlqFile,
      queueFile: path.join(dataDir, 'queue.jsonl'),
      describe: describeS3Body,
      log: quiet ? () => undefined : (line) => console.warn(line),
      ...opts.bridge,
      handler: (event, context) => {
        if (!ingest) return Promise.reject(new StackStartError('the ingest handler is not loaded yet'));
        return ingest(event, context);
      },
    });
    started.push({ name: 'bridge', close: () => bridge.stop() });

    const status: BridgeStatusServer = await startBridgeStatusServer(bridge, { host, port: ports.bridge });
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

    ingest = opts.ingestHandler ?? (await loadIngestHandler());
    // The erase and callbacks functions, consuming their queues in-process (lib/jobs/queue.ts). Like the API's, they
    // read their configuration at import, so only a stack whose environment is applied runs them.
    for (const queue of opts.applyEnv !== false ? (['erase', 'callbacks'] as const) : []) {
      const mod = (await import(path.join(ROOT, 'functions', queue, 'handler'))) as { handler: LocalConsumer };
      const unregister = registerLocalConsumer(queue, mod.handler);
      started.push({ name: `${queue} consumer`, close: async () => unregister() });
    }
    if (opts.apiHandler !== false) {
      apiFunctions = opts.apiHandler ? oneHandlerForAll(opts.apiHandler) : await loadApiFunctions(ROOT);
    }

    // ---- Clients (DESIGN §4: a client `demo` exists from the start): ICECAT_DEMO_API_KEY, else the data dir's own
    // key, made at the first start and kept, so a restart does not hand out (and leave valid) a new one each time.
    const demoApiKey = await provisionDemoClient(
      dynamodb.url,
      dynamodb.table.name,
      process.env.ICECAT_DEMO_API_KEY || (await localSecret(path.join(dataDir, 'demo-api-key'), generateApiKey)),
    );

    const disconnect = connectS3Notifications(s3, bridge, { bucket: s3.bucket, prefix: 'uploads/', log });
    started.push({ name: 'notifications', close: async () => disconnect() });

    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        await closeAll(started);
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
      demoApiKey,
      bridge,
      whenIdle: (timeoutMs) => bridge.whenIdle(timeoutMs),
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

/** Registers the demo client's key (only its hash is stored) and returns the key. */
async function provisionDemoClient(endpoint: string, tableName: string, key: string): Promise<string> {
  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
  });
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

async function loadIngestHandler(): Promise<BatchHandler> {
  const mod = (await import('../functions/ingest/handler')) as { handler: BatchHandler };
  return mod.handler;
}

async function startDetector(
  host: string,
  port: number,
  tuning: { throttleRate?: number; latencyMs?: number; s3: S3Client },
): Promise<DetectorServer | undefined> {
  const relative = 'local/detector/server';
  if (!moduleExists(relative)) return undefined;
  const mod = (await import(path.join(ROOT, relative))) as {
    startDetectorServer(opts: {
      host: string;
      port: number;
      throttleRate?: number;
      latencyMs?: number;
      s3: S3Client;
    }): Promise<DetectorServer>;
  };
  return mod.startDetectorServer({ host, port, ...tuning });
}
