// Retries of transient failures (network errors, 5xx, 429) with capped exponential backoff and full jitter, as the
// AWS SDKs do: many clients retrying at once spread out instead of hammering a recovering service together.
import { IceCatError, type IceCatErrorOptions } from '../errors';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 5, baseMs: 250, maxMs: 8_000 };

/** A failure worth another try; `retryAfterMs` is the server's own hint (Retry-After), when it gave one. */
export class TransientError extends IceCatError {
  override name = 'TransientError';
  readonly code: string = 'transient';
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: IceCatErrorOptions & { retryAfterMs?: number | undefined }) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export const isTransientStatus = (status: number): boolean => status === 429 || status >= 500;

/** The wait before try `attempt + 1` (attempt counts from 1): uniform in [0, min(max, base·2^(attempt-1))]. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  return Math.round(random() * ceiling);
}

/** Retry-After in seconds or as an HTTP date, to ms from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface RetryHooks {
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told before each wait, e.g. to log it. */
  onRetry?: (err: TransientError, attempt: number, waitMs: number) => void;
  /** Whether this transient failure may be tried again (default: every one). */
  retryable?: (err: TransientError) => boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `task` until it succeeds, throws something other than a TransientError, or runs out of tries. */
export async function withRetry<T>(
  task: (attempt: number) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  hooks: RetryHooks = {},
): Promise<T> {
  const sleep = hooks.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await task(attempt);
    } catch (err) {
      if (!(err instanceof TransientError) || attempt >= policy.attempts || hooks.retryable?.(err) === false) throw err;
      const waitMs = Math.min(policy.maxMs, Math.max(err.retryAfterMs ?? 0, backoffMs(attempt, policy, hooks.random)));
      hooks.onRetry?.(err, attempt, waitMs);
      await sleep(waitMs);
    }
  }
}

/** A fetch that failed before any answer (refused, reset, DNS, timeout) is transient; anything else is a bug. */
export function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
