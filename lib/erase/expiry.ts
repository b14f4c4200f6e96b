// The expiry sweep (docs/design.md §6, "A batch expires whole"): a batch whose retention is over is erased as a
// DELETE would erase it, objects under every prefix and items alike. The sweep reads the sparse batches-expiring index
// (every summary, by expiry: a key condition, never a Scan), marks each expired batch as being erased and queues its
// erasure to the erase job. On AWS a scheduled function runs it (functions/expire); locally the stack runs it at start
// and every interval (local/stack/expiry.ts), and since dynalite has no TTL it is what deletes expired items there too.

import type { JobQueue } from '../jobs/queue';
import type { ExpiredBatchesPage, ExpiryStartKey } from '../store/expiry/expired';
import { nowSeconds } from '../store/table/schema';
import { encodeEraseMessage } from './message';

/**
 * An erasure queued this long ago whose batch still has its summary is queued again: well over the erase queue's
 * visibility timeout (serverless.yml, 5,400 s), so a slow erasure still running is not doubled.
 */
export const ERASURE_REQUEUE_MS = 2 * 3_600_000;

/**
 * A batch still listed this long after its expiry is overdue (docs/design.md §14: "batches past their retention not
 * erased after an hour"): the sweep counts them, and the expire function publishes the count for its alarm.
 */
const ERASURE_OVERDUE_SECONDS = 3600;

/**
 * What the sweep asks of the store, and only that (lib/store/expiry/expired.ts ExpiredBatches implements it; a test may
 * hand a fake).
 */
export interface ExpiryStore {
  /** A page of the batches expired by `nowS` (epoch s), from the expiring index, oldest first. */
  expiredPage(nowS: number, pageSize: number, startKey?: ExpiryStartKey): Promise<ExpiredBatchesPage>;
  /** Marks the expired batch as being erased unless its erasure was queued at or after `staleBefore`; true when marked. */
  markExpired(clientId: string, batchId: string, now: number, staleBefore: number): Promise<boolean>;
}

/** The store's part the sweep asks, and the erase queue. */
export interface ExpiryDeps {
  expired: ExpiryStore;
  /** Where erasures go: the erase queue (functions/erase consumes it). */
  erasures: JobQueue;
}

interface ExpirySweepDeps extends ExpiryDeps {
  /** Clock (epoch ms), for tests. */
  now?: () => number;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

interface ExpirySweepLimits {
  /** A batch whose erasure was queued this long ago and still has its summary is queued again (its message was lost). */
  requeueAfterMs: number;
  /** Index keys read per Query. */
  pageSize?: number;
  /**
   * The time left to the run (ms; on AWS the function's context.getRemainingTimeInMillis): the run goes on until
   * nothing due remains, or until less than `reserveMs` is left, and the next scheduled run goes on from there.
   * Without it (the local stack) a run always goes on to the end.
   */
  remainingMs?: () => number;
  /** Time kept back when the run stops early (default EXPIRY_RESERVE_MS). */
  reserveMs?: number;
}

/** What a run keeps of its time when it stops early: one page read and its marks and sends take well under it. */
const EXPIRY_RESERVE_MS = 10_000;

export interface ExpirySweepResult {
  /** Expired batches the index listed (erasures queued or still running). */
  expired: number;
  /** Batches whose erasure this run queued, as `clientId/batchId`. */
  queued: string[];
  /** True when the run's time ended it before the index did: the next run goes on. */
  truncated: boolean;
  /** Of the expired batches listed, those that expired over ERASURE_OVERDUE_SECONDS ago and still have their summary. */
  overdue: number;
}

/**
 * Marks one expired batch as being erased and queues its erasure, unless that was done less than `staleBefore` ago
 * (another sweep, or a POST reusing its name, got there first). True when this call queued it.
 */
async function queueExpiredErasure(
  deps: ExpiryDeps,
  clientId: string,
  batchId: string,
  now: number,
  staleBefore: number,
): Promise<boolean> {
  if (!(await deps.expired.markExpired(clientId, batchId, now, staleBefore))) return false;
  await deps.erasures.send(encodeEraseMessage(clientId, batchId));
  return true;
}

/**
 * One run: every batch expired by now is marked and its erasure queued, page after page until nothing due remains (or
 * the run's time runs short). Batches whose erasure is already running are passed over by their mark, so no client's
 * backlog of expired batches keeps another's waiting beyond the runs it takes to go through the index once.
 */
export async function sweepExpiredBatches(deps: ExpirySweepDeps, limits: ExpirySweepLimits): Promise<ExpirySweepResult> {
  const now = (deps.now ?? Date.now)();
  const result: ExpirySweepResult = { expired: 0, queued: [], truncated: false, overdue: 0 };
  let startKey: ExpiryStartKey | undefined;
  do {
    const page = await deps.expired.expiredPage(nowSeconds(now), limits.pageSize ?? 100, startKey);
    for (const { clientId, batchId, expiresAt } of page.batches) {
      if (limits.remainingMs && limits.remainingMs() < (limits.reserveMs ?? EXPIRY_RESERVE_MS)) {
        result.truncated = true;
        break;
      }
      result.expired += 1;
      if (expiresAt <= nowSeconds(now) - ERASURE_OVERDUE_SECONDS) result.overdue += 1;
      if (await queueExpiredErasure(deps, clientId, batchId, now, now - limits.requeueAfterMs))
        result.queued.push(`${clientId}/${batchId}`);
    }
    startKey = page.next;
  } while (startKey && !result.truncated);
  if (result.queued.length > 0 || result.truncated) deps.log?.('queued the erasure of expired batches', { ...result });
  return result;
}
