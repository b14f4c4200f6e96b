// The local stand-in for S3 notifications → SQS → Lambda event source mapping.
// - encodeS3EventKey / s3EventRecord: the AWS-exact S3 event record (s3rver's own is version 2.0 with a raw key).
// - QueueBridge: an in-memory SQS queue with the Lambda poller's behaviour (batches, partial batch failures,
//   retries with backoff, a dead-letter list after maxReceiveCount), independent of S3 so it is unit-testable.
// - connectS3Notifications: the bucket notification (ObjectCreated:* under a prefix) feeding the queue.
// - startBridgeStatusServer: idle wait and dead letters over HTTP, for tests and benches in other processes.
import type { Context, S3EventRecord, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { createLambdaContext, LOCAL_ACCOUNT_ID, LOCAL_NAMES } from './env';
import type { LocalObjectEvent } from './s3';
import { listen } from './listen';

// ---------------------------------------------------------------------------------------------------------
// S3 event records

const FORM_SAFE = /^[A-Za-z0-9*\-._/]$/;

/**
 * An object key as S3 writes it into event notifications: application/x-www-form-urlencoded over the UTF-8
 * bytes (space → '+', '+' → %2B, everything but A–Z a–z 0–9 * - . _ percent-encoded, upper-case hex),
 * except that '/' is kept.
 */
export function encodeS3EventKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (byte === 0x20) out += '+';
    else if (byte < 0x80 && FORM_SAFE.test(char)) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

let lastSequencer = 0n;
/** A hexadecimal sequencer that grows with every event, as S3's does for one key. */
export function nextSequencer(now: number = Date.now()): string {
  const candidate = BigInt(now) << 20n;
  lastSequencer = candidate > lastSequencer ? candidate : lastSequencer + 1n;
  return lastSequencer.toString(16).toUpperCase().padStart(18, '0');
}

export interface S3RecordOptions {
  region?: string;
  configurationId?: string;
  requestId?: string;
  sequencer?: string;
}

/** The eventVersion 2.1 record S3 sends for an ObjectCreated event. */
export function s3EventRecord(event: LocalObjectEvent, opts: S3RecordOptions = {}): S3EventRecord {
  const object: S3EventRecord['s3']['object'] = {
    key: encodeS3EventKey(event.key),
    size: event.size,
    eTag: event.eTag ?? '',
    sequencer: opts.sequencer ?? nextSequencer(event.time.getTime()),
  };
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: opts.region ?? LOCAL_NAMES.region,
    eventTime: event.time.toISOString(),
    eventName: `ObjectCreated:${event.operation}`,
    userIdentity: { principalId: `AWS:AIDA${LOCAL_NAMES.accessKeyId}LOCALUSER` },
    requestParameters: { sourceIPAddress: event.sourceIp },
    responseElements: {
      'x-amz-request-id': opts.requestId ?? randomBytes(8).toString('hex').toUpperCase(),
      'x-amz-id-2': randomBytes(48).toString('base64'),
    },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: opts.configurationId ?? 'icecat-uploads',
      bucket: {
        name: event.bucket,
        ownerIdentity: { principalId: `A${LOCAL_ACCOUNT_ID}LOCAL` },
        arn: `arn:aws:s3:::${event.bucket}`,
      },
      object,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The queue and its Lambda poller

export type BatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface QueueBridgeOptions {
  handler: BatchHandler;
  /** Lambda's BatchSize (SQS allows 1–10 without a batching window). */
  batchSize?: number;
  /** MaximumBatchingWindow: how long the first waiting message waits for others to fill a batch. */
  batchWindowMs?: number;
  /** ScalingConfig.MaximumConcurrency: batches in flight at once. */
  maxConcurrency?: number;
  /** The redrive policy's maxReceiveCount: receives before a message moves to the dead-letter list. */
  maxReceiveCount?: number;
  /** First retry delay; doubles per receive (with jitter) up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The function timeout: a batch still running after it counts as failed. */
  invocationTimeoutMs?: number;
  queueArn?: string;
  region?: string;
  functionName?: string;
  /** Dead letters are appended here as JSON lines (and read back at start). */
  dlqFile?: string;
  /** Messages still queued at stop() are written here and re-queued by the next bridge using the file. */
  queueFile?: string;
  /** A short human description of a message body for logs (e.g. its S3 keys). */
  describe?: (body: string) => string;
  log?: (line: string) => void;
  random?: () => number;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  description: string;
  receiveCount: number;
  sentAt: string;
  deadLetteredAt: string;
  lastError: string;
}

export interface BridgeStats {
  sent: number;
  /** Messages deleted after a successful receive. */
  succeeded: number;
  /** Receives that failed and were scheduled again. */
  retried: number;
  deadLettered: number;
  invocations: number;
  failedInvocations: number;
  queued: number;
  delayed: number;
  inFlight: number;
  idle: boolean;
}

interface Message {
  messageId: string;
  body: string;
  md5OfBody: string;
  sentAt: number;
  firstReceiveAt?: number;
  receiveCount: number;
  availableAt: number;
  lastError?: string;
}

export class BridgeStoppedError extends Error {
  override name = 'BridgeStoppedError';
}

/** An SQS queue feeding a Lambda handler through an event source mapping, in one process. */
export class QueueBridge {
  private readonly opts: Required<Omit<QueueBridgeOptions, 'dlqFile' | 'queueFile'>> &
    Pick<QueueBridgeOptions, 'dlqFile' | 'queueFile'>;
  private readonly ready: Message[] = [];
  private readonly delayed = new Set<Message>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private windowTimer: NodeJS.Timeout | undefined;
  private inFlightBatches = 0;
  private inFlightMessages = new Set<Message>();
  private holds = 0;
  private stopped = false;
  private readonly idleWaiters = new Set<() => void>();
  private readonly dead: DeadLetter[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly counters = { sent: 0, succeeded: 0, retried: 0, deadLettered: 0, invocations: 0, failedInvocations: 0 };

  constructor(options: QueueBridgeOptions) {
    this.opts = {
      batchSize: 10,
      batchWindowMs: 100,
      maxConcurrency: 2,
      maxReceiveCount: 3,
      retryBaseMs: 1000,
      retryMaxMs: 30_000,
      invocationTimeoutMs: 120_000,
      queueArn: `arn:aws:sqs:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:icecat-ingest`,
      region: LOCAL_NAMES.region,
      functionName: 'icecat-ingest',
      describe: (body) => body.slice(0, 200),
      log: (line) => console.log(line),
      random: Math.random,
      ...options,
    };
    if (this.opts.batchSize < 1 || this.opts.batchSize > 10_000) throw new RangeError('batchSize must be 1–10000');
    if (this.opts.maxConcurrency < 1) throw new RangeError('maxConcurrency must be at least 1');
    if (this.opts.dlqFile && existsSync(this.opts.dlqFile)) this.dead.push(...readJsonLines<DeadLetter>(this.opts.dlqFile));
    if (this.opts.queueFile && existsSync(this.opts.queueFile)) {
      const saved = readJsonLines<Message>(this.opts.queueFile);
      rmSync(this.opts.queueFile);
      for (const message of saved) this.ready.push({ ...message, availableAt: Date.now() });
      if (saved.length > 0) this.opts.log(`[bridge] re-queued ${saved.length} message(s) saved at the last stop`);
      this.schedulePump();
    }
  }

  /** SendMessage: queues a body and returns its message id. */
  send(body: string): string {
    if (this.stopped) throw new BridgeStoppedError('the bridge is stopped');
    const now = Date.now();
    const message: Message = {
      messageId: randomUUID(),
      body,
      md5OfBody: createHash('md5').update(body).digest('hex'),
      sentAt: now,
      receiveCount: 0,
      availableAt: now,
    };
    this.counters.sent += 1;
    this.ready.push(message);
    this.pump();
    return message.messageId;
  }

  /** Keeps the bridge busy until the returned release is called (work about to be sent, e.g. a lookup). */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      this.notifyIfIdle();
    };
  }

  get idle(): boolean {
    return this.ready.length === 0 && this.delayed.size === 0 && this.inFlightBatches === 0 && this.holds === 0;
  }

  /** Resolves when nothing is queued, waiting for a retry, in flight or held; rejects after timeoutMs. */
  whenIdle(timeoutMs = 60_000): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.idleWaiters.delete(done);
        reject(new Error(`bridge not idle after ${timeoutMs} ms: ${JSON.stringify(this.stats())}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.idleWaiters.add(done);
    });
  }

  stats(): BridgeStats {
    return {
      ...this.counters,
      queued: this.ready.length,
      delayed: this.delayed.size,
      inFlight: this.inFlightMessages.size,
      idle: this.idle,
    };
  }

  /** The dead-letter list: earlier runs' (from dlqFile) then this run's. */
  deadLetters(): DeadLetter[] {
    return [...this.dead];
  }

  /**
   * Sends every dead letter back to the queue as a new message (as SQS's dead-letter redrive does), once the cause is
   * fixed, and empties the list and its file. Returns how many were sent.
   */
  redrive(): number {
    const letters = this.dead.splice(0);
    if (this.opts.dlqFile && existsSync(this.opts.dlqFile)) writeFileSync(this.opts.dlqFile, '');
    for (const letter of letters) this.send(letter.body);
    if (letters.length) this.opts.log(`[bridge] redrove ${letters.length} dead letter(s) to the queue`);
    return letters.length;
  }

  /**
   * Stops polling, waits up to drainTimeoutMs for batches in flight, and saves what is left (queued, waiting for
   * a retry, or still running) to queueFile so that the next start delivers it.
   */
  async stop(drainTimeoutMs = 10_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.windowTimer) clearTimeout(this.windowTimer);
    if (this.running.size > 0) {
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.running]),
        new Promise((resolve) => (timeout = setTimeout(resolve, drainTimeoutMs))),
      ]);
      clearTimeout(timeout);
    }
    const left = [...this.ready, ...this.delayed, ...this.inFlightMessages];
    this.ready.length = 0;
    this.delayed.clear();
    if (left.length > 0 && this.opts.queueFile) {
      mkdirSync(path.dirname(this.opts.queueFile), { recursive: true });
      writeFileSync(this.opts.queueFile, left.map((m) => JSON.stringify(m)).join('\n') + '\n');
      this.opts.log(`[bridge] saved ${left.length} undelivered message(s) to ${this.opts.queueFile}`);
    }
  }

  private schedulePump(): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.pump();
    }, 0);
    this.timers.add(timer);
  }

  private pump(): void {
    if (this.stopped) return;
    while (this.inFlightBatches < this.opts.maxConcurrency && this.ready.length > 0) {
      const oldest = this.ready[0] as Message;
      const windowEnds = oldest.availableAt + this.opts.batchWindowMs;
      if (this.ready.length < this.opts.batchSize && Date.now() < windowEnds) {
        if (!this.windowTimer) {
          this.windowTimer = setTimeout(() => {
            this.windowTimer = undefined;
            this.pump();
          }, windowEnds - Date.now());
        }
        return;
      }
      const batch = this.ready.splice(0, this.opts.batchSize);
      const run = this.invoke(batch).finally(() => this.running.delete(run));
      this.running.add(run);
    }
  }

  private async invoke(batch: Message[]): Promise<void> {
    this.inFlightBatches += 1;
    this.counters.invocations += 1;
    const now = Date.now();
    for (const message of batch) {
      message.receiveCount += 1;
      message.firstReceiveAt ??= now;
      this.inFlightMessages.add(message);
    }
    const event: SQSEvent = { Records: batch.map((m) => this.toRecord(m)) };
    const context = createLambdaContext(this.opts.functionName, this.opts.invocationTimeoutMs, randomUUID());
    let failed: Map<Message, string>;
    try {
      const response = await withTimeout(this.opts.handler(event, context), this.opts.invocationTimeoutMs);
      failed = this.failuresOf(batch, response);
    } catch (err) {
      this.counters.failedInvocations += 1;
      const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.opts.log(`[bridge] handler failed for a batch of ${batch.length}: ${reason}`);
      failed = new Map(batch.map((m) => [m, reason]));
    }
    for (const message of batch) {
      this.inFlightMessages.delete(message);
      const reason = failed.get(message);
      if (reason === undefined) this.counters.succeeded += 1;
      else this.retryOrDeadLetter(message, reason);
    }
    this.inFlightBatches -= 1;
    this.pump();
    this.notifyIfIdle();
  }

  /** Lambda's partial batch response rules: an unknown or empty identifier fails the whole batch. */
  private failuresOf(batch: Message[], response: SQSBatchResponse | void): Map<Message, string> {
    const items = response && Array.isArray(response.batchItemFailures) ? response.batchItemFailures : [];
    const byId = new Map(batch.map((m) => [m.messageId, m]));
    const failed = new Map<Message, string>();
    for (const item of items) {
      const message = item?.itemIdentifier ? byId.get(item.itemIdentifier) : undefined;
      if (!message) {
        this.opts.log(`[bridge] invalid batchItemFailures identifier ${JSON.stringify(item)}: the whole batch fails`);
        return new Map(batch.map((m) => [m, 'invalid batchItemFailures identifier']));
      }
      failed.set(message, 'reported in batchItemFailures');
    }
    return failed;
  }

  private retryOrDeadLetter(message: Message, reason: string): void {
    message.lastError = reason;
    if (message.receiveCount >= this.opts.maxReceiveCount) {
      this.deadLetter(message);
      return;
    }
    this.counters.retried += 1;
    if (this.stopped) {
      // Finished after stop(): kept for the queue file rather than retried by a timer.
      this.delayed.add(message);
      return;
    }
    const ceiling = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** (message.receiveCount - 1));
    const delay = Math.round(ceiling / 2 + (this.opts.random() * ceiling) / 2);
    message.availableAt = Date.now() + delay;
    this.delayed.add(message);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.delayed.delete(message);
      message.availableAt = Date.now();
      this.ready.push(message);
      this.pump();
    }, delay);
    this.timers.add(timer);
  }

  private deadLetter(message: Message): void {
    const letter: DeadLetter = {
      messageId: message.messageId,
      body: message.body,
      description: this.opts.describe(message.body),
      receiveCount: message.receiveCount,
      sentAt: new Date(message.sentAt).toISOString(),
      deadLetteredAt: new Date().toISOString(),
      lastError: message.lastError ?? 'unknown',
    };
    this.dead.push(letter);
    this.counters.deadLettered += 1;
    if (this.opts.dlqFile) {
      mkdirSync(path.dirname(this.opts.dlqFile), { recursive: true });
      appendFileSync(this.opts.dlqFile, JSON.stringify(letter) + '\n');
    }
    this.opts.log(
      `[bridge] dead-lettered ${letter.description} after ${letter.receiveCount} receives (${letter.lastError})` +
        (this.opts.dlqFile ? ` → ${this.opts.dlqFile}` : ''),
    );
  }

  private toRecord(message: Message): SQSRecord {
    return {
      messageId: message.messageId,
      receiptHandle: randomBytes(96).toString('base64'),
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: 'AIDAIENQZJOLO23YVJ4VO',
        ApproximateFirstReceiveTimestamp: String(message.firstReceiveAt ?? message.sentAt),
      },
      messageAttributes: {},
      md5OfBody: message.md5OfBody,
      eventSource: 'aws:sqs',
      eventSourceARN: this.opts.queueArn,
      awsRegion: this.opts.region,
    };
  }

  private notifyIfIdle(): void {
    if (!this.idle) return;
    for (const waiter of [...this.idleWaiters]) {
      this.idleWaiters.delete(waiter);
      waiter();
    }
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`invocation timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function readJsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as T];
      } catch {
        return [];
      }
    });
}

// ---------------------------------------------------------------------------------------------------------
// The bucket notification

export interface ObjectEventSource {
  onObjectEvent(listener: (event: LocalObjectEvent) => void): () => void;
  eTagOf(bucket: string, key: string): Promise<string>;
}

export interface NotificationOptions {
  bucket: string;
  /** The notification's prefix filter: objects the ingest moves elsewhere must not trigger it again. */
  prefix?: string;
  region?: string;
  log?: (line: string) => void;
}

/** The decoded keys of the S3 records in an SQS body, for logs and dead letters. */
export function describeS3Body(body: string): string {
  try {
    const parsed = JSON.parse(body) as { Records?: S3EventRecord[] };
    const keys = (parsed.Records ?? []).map((r) => decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')));
    return keys.length > 0 ? keys.map((k) => `s3://${parsed.Records?.[0]?.s3.bucket.name}/${k}`).join(', ') : body;
  } catch {
    return body.slice(0, 200);
  }
}

/** Sends one SQS message per ObjectCreated event under the prefix, as an S3 → SQS notification does. */
export function connectS3Notifications(source: ObjectEventSource, bridge: QueueBridge, opts: NotificationOptions): () => void {
  const prefix = opts.prefix ?? 'uploads/';
  return source.onObjectEvent((event) => {
    if (event.bucket !== opts.bucket || event.operation === 'Delete' || !event.key.startsWith(prefix)) return;
    const send = (e: LocalObjectEvent) => bridge.send(JSON.stringify({ Records: [s3EventRecord(e, { region: opts.region })] }));
    if (event.eTag !== undefined) {
      send(event);
      return;
    }
    // s3rver's copy events carry no ETag: read it from the store, keeping the bridge busy meanwhile.
    const release = bridge.hold();
    source
      .eTagOf(event.bucket, event.key)
      .then((eTag) => send({ ...event, eTag }))
      .catch((err: unknown) => (opts.log ?? console.warn)(`[bridge] no ETag for ${event.key}: ${String(err)}`))
      .finally(release);
  });
}

// ---------------------------------------------------------------------------------------------------------
// Status over HTTP

export interface BridgeStatusServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * GET /status → stats; GET /idle?timeoutMs=N → 200 once idle, 504 if not within N ms;
 * GET /dead-letters → the dead-letter list; POST /dead-letters/redrive → sends them back to the queue.
 */
export async function startBridgeStatusServer(
  bridge: QueueBridge,
  opts: { host: string; port: number },
): Promise<BridgeStatusServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && url.pathname === '/dead-letters/redrive') return reply(200, { redriven: bridge.redrive() });
    if (req.method !== 'GET') return reply(405, { error: 'GET only, but POST /dead-letters/redrive' });
    if (url.pathname === '/status') return reply(200, bridge.stats());
    if (url.pathname === '/dead-letters') return reply(200, { items: bridge.deadLetters() });
    if (url.pathname === '/idle') {
      const timeoutMs = Number(url.searchParams.get('timeoutMs') ?? 60_000);
      bridge.whenIdle(timeoutMs).then(
        () => reply(200, bridge.stats()),
        () => reply(504, bridge.stats()),
      );
      return;
    }
    reply(404, { error: 'unknown path: /status, /idle?timeoutMs=, /dead-letters, POST /dead-letters/redrive' });
  });
  // Long polls on /idle would hold a graceful close: end them at once.
  return listen(server, opts.host, opts.port, { graceMs: 0 });
}
