// What a caller of the local stack (stack.ts) gives it and gets back: its options, endpoints and the running stack.
import type { LocalReconciler } from '../bridge/reconcile';
import type { StackPorts } from '../contract';
import type { DiskState } from '../disk-space';
import type { HttpApiHandler } from '../gateway/gateway';
import type { BatchHandler, LocalQueueOptions } from '../queue/options';
import type { LocalQueue } from '../queue/queue';
import type { LocalExpiry } from './expiry';

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
  /**
   * Start the local Rekognition endpoint (default true); `workers`: its pool's size (default ICECAT_DETECTOR_WORKERS,
   * else one per core); `memoEntries`: answers it keeps by image (local/detector/memo.ts; the test stacks keep some).
   */
  detector?: boolean | { throttleRate?: number; latencyMs?: number; workers?: number; memoEntries?: number };
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
   * The expiry sweep (local/stack/expiry.ts): at start, then every intervalMs (default ICECAT_EXPIRY_INTERVAL_SECONDS, 60 s),
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
