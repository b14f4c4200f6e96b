// How long to wait before trying again what a service throttled or left unprocessed: capped exponential backoff
// with full jitter, so retries of many callers spread out instead of arriving together.

export interface BackoffPolicy {
  /** The first wait's ceiling in ms; doubles each round. */
  baseDelayMs: number;
  /** No ceiling goes above this. */
  maxDelayMs: number;
}

/** A random wait below min(max, base·2^round); round counts from 0. */
export const backoffDelay = (round: number, policy: BackoffPolicy, random: () => number = Math.random): number =>
  Math.floor(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** round));
