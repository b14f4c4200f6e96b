// `icecat import --wait`, its first part: follows the listing of the batch's source (listing, waiting for the quota,
// listed) with a progress line each time it moves, until every key is listed; waitUntilDone (wait.ts) then follows the
// classification of the images it sent.

import type { BatchSummary } from '../api/client-contract';
import type { ApiClient } from './api-client';
import { NetworkError, WaitTimeoutError } from './errors';
import { importLine } from './import-output';
import type { ProgressReporter } from './progress';

export interface ListingWatch {
  pollMs: number;
  /** How long an API that does not answer is asked again, in a row, before the wait gives up. */
  outageMs: number;
  /** Epoch ms after which the wait gives up (WaitTimeoutError), the listing going on at the service. */
  deadline?: number;
  /** Seconds of --wait-timeout, as the timeout's message says them. */
  timeoutSeconds?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads the summary until the source is listed (or the batch done); a batch that is no import is answered at once. */
export async function waitUntilListed(
  client: ApiClient,
  batchId: string,
  progress: ProgressReporter,
  watch: ListingWatch,
): Promise<BatchSummary> {
  let last: BatchSummary | undefined;
  let unansweredSince: number | undefined;
  for (;;) {
    if (watch.deadline !== undefined && Date.now() >= watch.deadline) {
      last ??= await client.getBatch(batchId);
      throw new WaitTimeoutError(
        `gave up waiting after ${watch.timeoutSeconds ?? 0} s (--wait-timeout): batch ${batchId} is ${last.status}` +
          `${last.import ? `, ${importLine(last.import, { total: last.counts.total, finished: 0 })}` : ''}; the service goes on with it: icecat status ${batchId}`,
        { last },
      );
    }
    try {
      last = await client.getBatch(batchId);
      unansweredSince = undefined;
    } catch (err) {
      if (!(err instanceof NetworkError)) throw err;
      if (unansweredSince === undefined) {
        unansweredSince = Date.now();
        progress.note(`${err.message}; asking again for up to ${Math.round(watch.outageMs / 1000)} s`);
      }
      if (Date.now() - unansweredSince >= watch.outageMs) throw err;
      await sleep(watch.pollMs);
      continue;
    }
    const imp = last.import;
    if (!imp) return last;
    const c = last.counts;
    progress.importing(imp.state, importLine(imp, { total: c.total, finished: c.success + c.fail + c.duplicate }));
    if (imp.state === 'listed' || last.status === 'done') return last;
    await sleep(watch.pollMs);
  }
}
