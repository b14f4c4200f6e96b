// When a failed callback is tried again: exponential backoff with jitter, each wait capped (SQS DelaySeconds takes
// at most 900 s), until the retry window since the first attempt (a day on AWS, minutes locally) is spent.
import type { PortRanges } from './target';

interface CallbackRetryPolicy {
  /** Wait after the first failed attempt; doubled after each further one. */
  baseSeconds: number;
  maxDelaySeconds: number;
  /** No attempt starts later than this after the first one. */
  windowSeconds: number;
}

export interface NotifyConfig {
  retry: CallbackRetryPolicy;
  /** Deadline of one attempt, connection to last byte. */
  timeoutMs: number;
  /** Plain http and loopback targets (the local stack); never on AWS. */
  allowLoopback: boolean;
  /** Where loopback is allowed, the ports a loopback target may have (CALLBACK_LOOPBACK_PORTS); none by default. */
  loopbackPorts: PortRanges;
}

/**
 * Seconds to wait before the next attempt, after `attempts` failed ones (≥ 1), or undefined when the next attempt
 * would start past the window. Half the delay is fixed and half random ("equal jitter"), so retries of many batches
 * spread out without any retry coming early.
 */
export function nextRetryDelay(
  attempts: number,
  elapsedSeconds: number,
  policy: CallbackRetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  const full = Math.min(policy.baseSeconds * 2 ** Math.max(attempts - 1, 0), policy.maxDelaySeconds);
  const delay = full / 2 + (random() * full) / 2;
  return elapsedSeconds + delay > policy.windowSeconds ? undefined : delay;
}
