// The expiry sweep on the local stack (lib/erase/expiry.ts): once at start, then every interval, as the scheduled
// function runs it on AWS. dynalite has no TTL and the local S3 no lifecycle, so this is what makes an expired batch go
// locally: its erasure (the erase job, in-process) deletes its objects under every prefix and every item it left.

import type { S3Client } from '@aws-sdk/client-s3';
import { ERASURE_REQUEUE_MS, type ExpirySweepResult, sweepExpiredBatches } from '../../lib/erase/expiry';
import type { JobQueue } from '../../lib/jobs/queue';
import { ExpiredBatches } from '../../lib/store/expiry/expired';
import type { TableRef } from '../../lib/store/table/access';
import { startPeriodicSweep } from '../periodic-sweep';
import { applyLifecycle, type LifecycleRule } from '../s3/lifecycle';

export interface LocalExpiryOptions {
  ddb: TableRef['ddb'];
  tableName: string;
  erasures: JobQueue;
  /** Time between the end of one sweep and the start of the next (ICECAT_EXPIRY_INTERVAL_SECONDS, default 60 s). */
  intervalMs: number;
  /**
   * The bucket's lifecycle rules (local/s3/lifecycle.ts), applied at the first sweep and then at most every
   * intervalMs (default an hour: S3 runs them once a day).
   */
  lifecycle?: { s3: S3Client; bucket: string; rules: readonly LifecycleRule[]; intervalMs?: number; keep?: (key: string) => boolean };
  /** Clock (epoch ms), for tests. */
  now?: () => number;
  log?: (line: string) => void;
}

/** One run: the batches whose erasure it queued, and the objects the lifecycle rules deleted per prefix (when run). */
export type LocalExpiryResult = ExpirySweepResult & { lifecycle?: Record<string, number> };

export interface LocalExpiry {
  /** Runs a sweep now (after the one running, if any) and resolves with its result. */
  sweep(): Promise<LocalExpiryResult>;
  stop(): Promise<void>;
}

export function startLocalExpiry(opts: LocalExpiryOptions): LocalExpiry {
  const { intervalMs } = opts;
  const log = opts.log ?? ((line: string) => console.warn(line));
  let lifecycleAt: number | undefined;

  const runOnce = async (): Promise<LocalExpiryResult> => {
    const result = await sweepExpiredBatches(
      {
        expired: new ExpiredBatches(opts),
        erasures: opts.erasures,
        ...(opts.now ? { now: opts.now } : {}),
        log: (line, details) => log(`[expiry] ${line} ${JSON.stringify(details ?? {})}`),
      },
      // Until nothing due remains: the local stack has no function timeout.
      { requeueAfterMs: ERASURE_REQUEUE_MS },
    );
    const { lifecycle } = opts;
    const now = (opts.now ?? Date.now)();
    if (!lifecycle || (lifecycleAt !== undefined && now - lifecycleAt < (lifecycle.intervalMs ?? 3_600_000))) return result;
    lifecycleAt = now;
    const deleted = await applyLifecycle(lifecycle.s3, lifecycle.bucket, lifecycle.rules, now, lifecycle.keep);
    if (Object.values(deleted).some((n) => n > 0)) log(`[expiry] lifecycle rules deleted ${JSON.stringify(deleted)}`);
    return { ...result, lifecycle: deleted };
  };

  return startPeriodicSweep(runOnce, {
    intervalMs,
    log,
    name: 'expiry',
    initial: { expired: 0, queued: [], truncated: false, overdue: 0 },
  });
}
