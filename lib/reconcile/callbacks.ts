// The sweep's second half: completion callbacks are delivered at least once (docs/design.md §6). The write that
// stamps a batch done also marks it as owing its callback (cb_due, the sparse callbacks-due index) until an attempt
// delivers it or the retry window closes. A callback whose message was lost (its first send failed, the process died
// with a retry pending, a message dropped) shows no progress: no attempt since the batch turned done, or none for
// longer than the longest wait between two attempts. The sweep queues such a callback again, with the attempts it
// had, exactly as the completion hook would have; stamping the batch first makes two sweeps never queue it twice.

import type { Batch } from '../domain/batch';
import type { BatchSummary } from '../domain/summary';
import type { JobQueue } from '../jobs/queue';
import { isFinalState } from '../notify/delivery';
import { callbackMessage, completedSummary } from '../notify/job';
import type { NotifyConfig } from '../notify/schedule';

/** What the sweep asks of the store (lib/store/callback/requeue.ts CallbackRequeues). */
export interface OwedCallbacks {
  /** The batches owing their completion callback that turned done before `doneBefore` (epoch ms), oldest first. */
  owing(doneBefore: number): AsyncIterable<{ clientId: string; batchId: string }>;
  /** A batch's summary, read consistently; undefined when it is gone. */
  summary(clientId: string, batchId: string): Promise<Batch | undefined>;
  /** Stamps that the callback is queued again; false when it no longer owes it or another sweep stamped it first. */
  stampRequeued(batch: Batch, now: number): Promise<boolean>;
}

export interface CallbackSweepDeps {
  owed: OwedCallbacks;
  /** The callbacks queue (SQS on AWS, the in-process consumer locally). */
  callbacks: JobQueue;
  /** The summary as the API shows it (lib/api/present.ts). */
  present: (batch: Batch) => BatchSummary;
  now?: () => number;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

export interface CallbackSweepLimits {
  /** A callback with no attempt yet is queued again this long after its batch turned done (or its last requeue). */
  firstAttemptGraceMs: number;
  /** One with attempts, this long after the last attempt (or requeue): above the longest wait between two attempts. */
  retryGraceMs: number;
  /** Callbacks queued again at most per run. */
  maxCallbacks: number;
}

export interface CallbackSweepResult {
  /** Batches owing a callback past the first-attempt grace. */
  owing: number;
  /** Callbacks queued again, as `clientId/batchId`. */
  requeued: string[];
}

/** The grace periods from the callbacks' own retry policy: a callback still retrying is never doubled. */
export function callbackSweepLimits(config: NotifyConfig, graceSeconds: number, maxCallbacks = 500): CallbackSweepLimits {
  const graceMs = graceSeconds * 1000;
  return {
    firstAttemptGraceMs: graceMs,
    retryGraceMs: config.retry.maxDelaySeconds * 1000 + config.timeoutMs + graceMs,
    maxCallbacks,
  };
}

export async function sweepCallbacks(deps: CallbackSweepDeps, limits: CallbackSweepLimits): Promise<CallbackSweepResult> {
  const now = (deps.now ?? Date.now)();
  const result: CallbackSweepResult = { owing: 0, requeued: [] };
  for await (const { clientId, batchId } of deps.owed.owing(now - limits.firstAttemptGraceMs)) {
    if (result.requeued.length >= limits.maxCallbacks) break;
    result.owing += 1;
    const batch = await deps.owed.summary(clientId, batchId);
    if (!batch?.callbackDue || !batch.callbackUrl || batch.deleting) continue;
    const state = batch.callback;
    if (state && isFinalState(state)) continue;
    const lastProgress = Math.max(batch.doneAt ?? 0, state?.lastAttemptAt ?? 0, batch.callbackRequeuedAt ?? 0);
    if (now - lastProgress < (state ? limits.retryGraceMs : limits.firstAttemptGraceMs)) continue;
    if (!(await deps.owed.stampRequeued(batch, now))) continue;
    const after = state
      ? { attempts: state.attempts, ...(state.firstAttemptAt !== undefined ? { firstAttemptAt: state.firstAttemptAt } : {}) }
      : undefined;
    try {
      await deps.callbacks.send(callbackMessage(batch, batch.callbackUrl, completedSummary(batch, deps.present), after));
      result.requeued.push(`${clientId}/${batchId}`);
    } catch (err) {
      // Stamped but not sent: the next run after the grace tries again.
      deps.log?.('callback not queued again; the next sweep tries again', { clientId, batchId, error: String(err) });
    }
  }
  if (result.requeued.length > 0) deps.log?.('queued completion callbacks again', { callbacks: result.requeued });
  return result;
}
