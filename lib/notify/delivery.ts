// A completion callback's delivery, one attempt at a time: resolve and judge the target, POST the signed summary,
// then say what the client sees (the callback state on its batch) and whether and when to try again. The caller
// carries the job between attempts (an SQS message delayed by `retryInSeconds` on AWS; the local queue locally).
import type { CallbackState } from '../domain/batch';
import { type AttemptResult, postCallback } from './deliver';
import { type NotifyConfig, nextRetryDelay } from './schedule';
import { CallbackTargetError, type Lookup, resolveCallbackTarget } from './target';

export interface CallbackJob {
  url: string;
  /** The summary as sent: the same bytes on every attempt. */
  body: string;
  /** Epoch ms of the first attempt (set by the first). */
  firstAttemptAt?: number;
  /** Attempts made before this one. */
  attempts: number;
}

export interface DeliveryStep {
  state: CallbackState;
  /** The job for the next attempt, and its delay; absent when delivered or given up. */
  retry?: { job: CallbackJob; inSeconds: number };
  attempt: Omit<AttemptResult, 'signature'> & { signature: string | null };
}

export async function attemptDelivery(
  job: CallbackJob,
  secret: string,
  config: NotifyConfig,
  deps: { now?: () => number; lookup?: Lookup; random?: () => number } = {},
): Promise<DeliveryStep> {
  const now = (deps.now ?? Date.now)();
  const firstAttemptAt = job.firstAttemptAt ?? now;
  let attempt: DeliveryStep['attempt'];
  try {
    // Resolved on every attempt: a host that moved to a private address since the last one is refused now.
    const target = await resolveCallbackTarget(
      job.url,
      { allowLoopback: config.allowLoopback, loopbackPorts: config.loopbackPorts },
      deps.lookup,
    );
    attempt = await postCallback(target, secret, job.body, { timeoutMs: config.timeoutMs, nowSeconds: Math.floor(now / 1000) });
  } catch (err) {
    if (!(err instanceof CallbackTargetError)) throw err;
    attempt = { delivered: false, status: null, error: err.code, signature: null };
  }
  const attempts = job.attempts + 1;
  const state: CallbackState = {
    url: job.url,
    attempts,
    lastAttemptAt: now,
    lastStatus: attempt.status,
    lastError: attempt.error,
    deliveredAt: attempt.delivered ? now : null,
    gaveUpAt: null,
    firstAttemptAt,
  };
  if (attempt.delivered) return { state, attempt };
  const inSeconds = nextRetryDelay(attempts, (now - firstAttemptAt) / 1000, config.retry, deps.random);
  if (inSeconds === undefined) return { state: { ...state, gaveUpAt: now }, attempt };
  return { state, attempt, retry: { job: { ...job, firstAttemptAt, attempts }, inSeconds } };
}

/** Delivered, or given up: nothing more to attempt. */
export const isFinalState = (state: CallbackState): boolean => state.deliveredAt !== null || state.gaveUpAt !== null;
