// A batch as the store records it, its callback's state, and the rules of its status: arrived, visible, auto-closed,
// done.
import type { Counts } from './counts';
import type { ImportProgress, ImportSource } from './import';

export interface Batch {
  clientId: string;
  batchId: string;
  /** Epoch ms. */
  createdAt: number;
  debug: boolean;
  retentionDays: number;
  /** Epoch s: DynamoDB TTL. */
  expiresAt: number;
  /** Files the client said it uploads in all; undefined when it never said. */
  expected?: number;
  closed: boolean;
  /** Epoch ms. */
  closedAt?: number;
  /** The cat threshold the batch was last re-thresholded to (POST …:reclassify); the configured one until then. */
  catMinConfidence?: number;
  /** Epoch ms; set once, by the write that made the batch done. */
  doneAt?: number;
  counts: Counts;
  /** Being erased (DELETE): invisible to reads, refused by the ingest. */
  deleting?: boolean;
  /** Where the summary is POSTed once the batch is done. */
  callbackUrl?: string;
  /** The last delivery of that POST. */
  callback?: CallbackState;
  /** Done with a callback not yet delivered nor given up (the sweep queues it again when its message was lost). */
  callbackDue?: boolean;
  /** Epoch ms: when the sweep last queued the callback again. */
  callbackRequeuedAt?: number;
  /** Being classified again (POST …:redetect): its run id and the images it still owes an answer. */
  redetecting?: { run: string; left: number };
  /** An import's source and progress (docs/design.md §16); absent on a batch of uploads. */
  import?: ImportProgress & { source: ImportSource };
}

export const BATCH_STATUSES = ['open', 'processing', 'done'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Every declared file arrived (or none was declared). */
export const allArrived = (b: Pick<Batch, 'expected' | 'counts'>): boolean => b.expected === undefined || b.counts.total >= b.expected;

/** docs/design.md §6: open until closed; processing while anything is pending or declared files are missing; then done. */
export function batchStatus(b: Pick<Batch, 'closed' | 'expected' | 'counts'>): BatchStatus {
  if (!b.closed) return 'open';
  return b.counts.pending === 0 && allArrived(b) ? 'done' : 'processing';
}

/**
 * The status a reader is told: `done` only once the write that stamps doneAt has landed, as the batch list's filter
 * (done_ts) has it, so no summary says done without doneAt, before the completion callback is queued.
 */
export function reportedStatus(
  b: Pick<Batch, 'closed' | 'expected' | 'counts' | 'doneAt'> & Pick<Partial<Batch>, 'redetecting'>,
): BatchStatus {
  // A re-detection makes a done batch processing again until its last image has its new answer.
  if (b.redetecting !== undefined) return 'processing';
  if (b.doneAt !== undefined) return 'done';
  const status = batchStatus(b);
  return status === 'done' ? 'processing' : status;
}

/**
 * A batch is shown while it exists, has not expired and is not being erased (the reads and the lifecycle service alike).
 * Here rather than beside isVisibleImage in reader.ts, which the batches function must not bundle.
 */
export function isVisibleBatch(batch: Batch | undefined, nowS: number): batch is Batch {
  return batch !== undefined && batch.deleting !== true && typeof batch.expiresAt === 'number' && batch.expiresAt > nowS;
}

/** Auto-close: as many uploads arrived as the client declared. */
export const shouldAutoClose = (b: Batch): boolean => !b.closed && b.expected !== undefined && b.counts.total >= b.expected;

/** Done now, and not yet stamped done. */
export const shouldMarkDone = (b: Batch): boolean => b.doneAt === undefined && batchStatus(b) === 'done';

// ---- what a client is shown of a batch ---------------------------------------------------------------------------

/** What GET /v1/batches/{batchId} shows of the callback. */
export interface CallbackState {
  url: string;
  attempts: number;
  lastAttemptAt: number | null;
  /** The receiver's status of the last attempt, null when none came. */
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  /** Set when the window closed without a 2xx. */
  gaveUpAt: number | null;
  /** Epoch ms of the first attempt: where the retry window starts (also for an attempt the sweep queues again). */
  firstAttemptAt?: number;
}
