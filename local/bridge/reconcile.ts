// The reconciliation sweep on the local stack: once at start, then every interval, over the local bucket, sending
// to the local queue — and skipping objects whose message the queue still holds, which only the local queue can tell.
// Each run then queues again the completion callbacks whose message was lost (lib/reconcile/callbacks.ts): the local
// callbacks queue keeps pending retries in memory only, so after a restart this is what delivers them.

import type { S3Client } from '@aws-sdk/client-s3';
import type { CountCheckResult } from '../../lib/reconcile/batch-counts';
import { type CallbackSweepDeps, type CallbackSweepLimits, type CallbackSweepResult, sweepCallbacks } from '../../lib/reconcile/callbacks';
import type { RedetectSweepResult } from '../../lib/reconcile/redetect-runs';
import { keysInS3Message } from '../../lib/reconcile/s3-event';
import { type SweepLimits, type SweepResult, sweepUploads } from '../../lib/reconcile/sweep';
import { startPeriodicSweep } from '../periodic-sweep';
import type { LocalQueue } from '../queue/queue';

export interface LocalReconcileOptions {
  s3: S3Client;
  bucket: string;
  region: string;
  queue: LocalQueue;
  /** Time between the end of one sweep and the start of the next (ICECAT_RECONCILE_INTERVAL_SECONDS, default 60 s). */
  intervalMs: number;
  /** ICECAT_RECONCILE_GRACE_SECONDS, default 10 s: the local queue tells which objects are still queued. */
  graceMs: number;
  maxObjects?: number;
  maxDurationMs?: number;
  onStaleBatch?(clientId: string, batchId: string): Promise<void> | void;
  /**
   * Each run's count check (lib/reconcile/batch-counts.ts): batches whose counters cannot be right, are due to be done,
   * or are stuck, are recounted and settled.
   */
  checkCounts?: () => Promise<CountCheckResult>;
  /** Refuses the sends the reconcile function's role does not allow (local/stack/iam.ts), before any is sent. */
  checkSend?: () => Promise<void>;
  /** Each run's look after re-detection runs (lib/reconcile/redetect-runs.ts). */
  redetections?: () => Promise<RedetectSweepResult>;
  /** Completion callbacks to look after (only where the callbacks consumer runs in-process). */
  callbacks?: { deps: Omit<CallbackSweepDeps, 'log'>; limits: CallbackSweepLimits };
  log?: (line: string) => void;
}

export type LocalSweepResult = SweepResult & {
  callbacks?: CallbackSweepResult;
  counts?: CountCheckResult;
  redetections?: RedetectSweepResult;
};

export interface LocalReconciler {
  /** Runs a sweep now (after the one running, if any) and resolves with its result. */
  sweep(): Promise<LocalSweepResult>;
  stop(): Promise<void>;
}

export function startLocalReconciler(opts: LocalReconcileOptions): LocalReconciler {
  const { intervalMs } = opts;
  const limits: SweepLimits = {
    graceMs: opts.graceMs,
    maxObjects: opts.maxObjects ?? 10_000,
    maxDurationMs: opts.maxDurationMs ?? 30_000,
  };
  const log = opts.log ?? ((line: string) => console.warn(line));
  const { queue } = opts;
  const sweepLog = (line: string, details?: Record<string, unknown>) => log(`[reconcile] ${line} ${JSON.stringify(details ?? {})}`);

  const sendMessages = async (bodies: string[]) => {
    // Queued again: their dead letters (if that is where they were) are redriven by these sends.
    const requeued = new Set<string>();
    if (bodies.length > 0) await opts.checkSend?.();
    try {
      for (const body of bodies) {
        queue.send(body);
        for (const { key } of keysInS3Message(body)) requeued.add(key);
      }
    } finally {
      queue.forgetDeadLettersFor(requeued);
    }
  };

  const runOnce = async (): Promise<LocalSweepResult> => {
    const release = queue.hold();
    try {
      const uploads = await sweepUploads(
        {
          s3: opts.s3,
          bucket: opts.bucket,
          region: opts.region,
          sendMessages,
          isQueued: (key) => queue.hasMessageFor(key),
          onStaleBatch: opts.onStaleBatch,
          log: sweepLog,
        },
        limits,
      );
      let result: LocalSweepResult = uploads;
      if (opts.checkCounts) {
        try {
          result = { ...result, counts: await opts.checkCounts() };
        } catch (err) {
          sweepLog('checking batch counts failed', { error: String(err) });
        }
      }
      if (opts.redetections) {
        try {
          result = { ...result, redetections: await opts.redetections() };
        } catch (err) {
          sweepLog('looking after re-detections failed', { error: String(err) });
        }
      }
      if (!opts.callbacks) return result;
      try {
        return { ...result, callbacks: await sweepCallbacks({ ...opts.callbacks.deps, log: sweepLog }, opts.callbacks.limits) };
      } catch (err) {
        // E.g. a data dir whose table predates the callbacks-due index (the stack warned at start).
        sweepLog('looking after completion callbacks failed', { error: String(err) });
        return result;
      }
    } finally {
      release();
    }
  };

  return startPeriodicSweep(runOnce, { intervalMs, log, name: 'reconcile', initial: undefined as unknown as LocalSweepResult });
}
