// The reconciliation sweep's count check (docs/design.md, "A full disk"). Without transactions (the local stack's
// dynalite) a record and its counter move are two writes, and a full disk can refuse either one; the next delivery of
// the upload repairs most of what that leaves (lib/store/batch-store.ts), but not every case: a close whose `done`
// stamp was refused, a batch none of whose uploads comes again, a recount that raced a counter move. Each run reads the
// live batches not yet done and recounts (then settles: done, callback, event) a batch whose counters cannot be right,
// one that is due to be done and is not stamped so, and a closed one whose counters held still since the last run
// (stuck: a recount of a quiet batch is exact). Work per run is bounded in batches.

import { type Batch, shouldMarkDone } from '../domain/batch';
import { type Counts, countsCannotBeRight } from '../domain/counts';

export interface CountCheckDeps {
  /** Every live batch's key (lib/store/expiry/live.ts). */
  batches(): AsyncIterable<{ clientId: string; batchId: string }>;
  store: {
    getBatch(clientId: string, batchId: string): Promise<Batch | undefined>;
    /** Recounts from the records and settles (lib/store/batch-store.ts). */
    recount(clientId: string, batchId: string): Promise<Batch | undefined>;
    isLive(batch: Batch | undefined): boolean;
  };
  /** What the previous run saw of each unsettled batch (kept by the caller between runs). */
  seen: Map<string, string>;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

export interface CountCheckResult {
  /** Summaries read. */
  checked: number;
  /** Batches recounted, as `clientId/batchId`, why, whether the recount moved a counter, and whether it is done now. */
  recounted: { batch: string; why: CountCheckReason; changed: boolean; done: boolean }[];
  truncated: boolean;
}

type CountCheckReason = 'impossible' | 'due' | 'stuck';

/** Why a batch needs a recount now, or undefined. `previous` is what the last run saw of it. */
export function recountReason(batch: Batch, previous: string | undefined): CountCheckReason | undefined {
  if (countsCannotBeRight(batch.counts)) return 'impossible';
  if (shouldMarkDone(batch)) return 'due';
  if (batch.closed && batch.doneAt === undefined && previous === countsKey(batch.counts)) return 'stuck';
  return undefined;
}

const countsKey = (c: Counts): string => JSON.stringify(c);

export async function checkBatchCounts(deps: CountCheckDeps, limits: { maxBatches: number }): Promise<CountCheckResult> {
  const result: CountCheckResult = { checked: 0, recounted: [], truncated: false };
  const unsettled = new Map<string, string>();
  for await (const { clientId, batchId } of deps.batches()) {
    if (result.checked >= limits.maxBatches) {
      result.truncated = true;
      break;
    }
    const batch = await deps.store.getBatch(clientId, batchId);
    result.checked += 1;
    if (!batch || !deps.store.isLive(batch) || batch.doneAt !== undefined) continue;
    const name = `${clientId}/${batchId}`;
    const why = recountReason(batch, deps.seen.get(name));
    let now = batch;
    if (why) {
      try {
        now = (await deps.store.recount(clientId, batchId)) ?? batch;
      } catch (err) {
        deps.log?.('recounting a batch failed; the next sweep tries again', { batch: name, error: String(err) });
      }
      result.recounted.push({
        batch: name,
        why,
        changed: countsKey(now.counts) !== countsKey(batch.counts),
        done: now.doneAt !== undefined,
      });
    }
    if (now.doneAt === undefined) unsettled.set(name, countsKey(now.counts));
  }
  // Only what this run saw is remembered: a batch done or gone is forgotten.
  if (!result.truncated) deps.seen.clear();
  for (const [name, key] of unsettled) deps.seen.set(name, key);
  // A stuck batch whose recount found its counters right is only waiting (a long queue, a full disk): not logged.
  const repaired = result.recounted.filter((r) => r.changed || r.done);
  if (repaired.length > 0) deps.log?.('recounted batches', { recounted: repaired });
  return result;
}
