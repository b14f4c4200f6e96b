// The local queue's options (queue.ts: an SQS queue and its Lambda event source mapping), its handler's type and its
// statistics.
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { LocalMessageVisibility } from '../../lib/aws/message-visibility';
import type { FairShareRule } from './fair-share';
import type { JournalOptions, JournalStats } from './journal';

export type BatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface LocalQueueOptions {
  handler: BatchHandler;
  /** Where the handler's ChangeMessageVisibility calls arrive (the same object the handler was given); none: ignored. */
  visibility?: LocalMessageVisibility;
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
  /** The journal that makes the queue durable; without one, messages live in memory only. */
  journalFile?: string;
  journal?: JournalOptions;
  /** A short human description of a message body for logs (e.g. its S3 keys). */
  describe?: (body: string) => string;
  /** The object keys a message body is about, so that hasMessageFor can answer (e.g. the S3 keys of a notification). */
  keysOf?: (body: string) => string[];
  /** Accept and journal messages but deliver none until resume() (e.g. while the handler loads). */
  paused?: boolean;
  /**
   * The fair queue's rule (fair-share.ts): when a message group holds a disproportionate share of the messages in
   * flight, other groups' messages go first. False delivers in arrival order. Default LOCAL_FAIR_SHARE.
   */
  fairShare?: FairShareRule | false;
  /** The MessageGroupId of a message sent without one (e.g. the uploading client of an S3 notification). */
  groupOf?: (body: string) => string | undefined;
  /**
   * With the fair share on: while every one of the maxConcurrency slots is busy, more batches may run beside them if
   * they hold only quiet groups' messages, up to maxQuietBatches at once (default true). Such a batch waits the
   * batching window from the oldest quiet message (not the noisy backlog's). On AWS a slot among many frees within a
   * fraction of a second and takes the quiet messages come meanwhile; with the two or so a machine runs, a quiet
   * client would otherwise wait for a noisy one's whole batch, and its messages coming one by one for each other.
   */
  quietSlot?: boolean;
  /** The quiet batches beside the full slots at most (default twice maxConcurrency). */
  maxQuietBatches?: number;
  log?: (line: string) => void;
  random?: () => number;
}

export interface QueueStats {
  sent: number;
  /** Messages deleted after a successful receive. */
  succeeded: number;
  /** Receives that failed and were scheduled again. */
  retried: number;
  deadLettered: number;
  invocations: number;
  failedInvocations: number;
  /** Messages found in the journal at start, not deleted by the previous run. */
  recovered: number;
  queued: number;
  delayed: number;
  inFlight: number;
  /** Message groups with messages waiting, and in flight. */
  groupsWaiting: number;
  groupsInFlight: number;
  idle: boolean;
  journal?: JournalStats;
}

/** The options with their defaults filled in. */
export type Settings = Required<
  Omit<
    LocalQueueOptions,
    'dlqFile' | 'journalFile' | 'journal' | 'keysOf' | 'paused' | 'visibility' | 'groupOf' | 'quietSlot' | 'maxQuietBatches'
  >
> &
  Pick<LocalQueueOptions, 'dlqFile' | 'journalFile' | 'journal' | 'keysOf' | 'groupOf'>;
