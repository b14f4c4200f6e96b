// When a failed callback is tried again: exponential backoff with jitter, each wait capped (SQS DelaySeconds takes
// at most 900 s), until the retry window since the first attempt (a day on AWS, minutes locally) is spent.
import { ConfigError, envBoolean, envNumber } from '../config';
import { MAX_DELAY_SECONDS } from '../jobs/queue';
import { parsePortRanges, type PortRanges } from './target';

export interface CallbackRetryPolicy {
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

export function loadNotifyConfig(): NotifyConfig {
  return {
    retry: {
      baseSeconds: envNumber('CALLBACK_RETRY_BASE_SECONDS', 30, { min: 0 }),
      maxDelaySeconds: envNumber('CALLBACK_RETRY_MAX_DELAY_SECONDS', MAX_DELAY_SECONDS, { min: 0, max: MAX_DELAY_SECONDS }),
      windowSeconds: envNumber('CALLBACK_RETRY_WINDOW_SECONDS', 86_400, { min: 0 }),
    },
    timeoutMs: envNumber('CALLBACK_TIMEOUT_MS', 10_000, { min: 1, max: 60_000, integer: true }),
    allowLoopback: envBoolean('CALLBACK_ALLOW_LOOPBACK', false),
    loopbackPorts: envPortRanges('CALLBACK_LOOPBACK_PORTS'),
  };
}

/** A list of ports and ranges ("8080,9000-9099") from the environment, none when unset; anything else fails. */
function envPortRanges(name: string): PortRanges {
  const raw = process.env[name] ?? '';
  const ranges = parsePortRanges(raw);
  if (!ranges) throw new ConfigError(`environment variable ${name} must list ports 1-65535 and ranges like "8080,9000-9099", got "${raw}"`);
  return ranges;
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
