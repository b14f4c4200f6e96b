// `icecat upload --wait`: reads a batch's summary until it is done, says why when nothing moves, gives up on request.

import type { BatchSummary } from '../api/client-contract';
import type { ApiClient } from './api-client';
import { NetworkError, WaitTimeoutError } from './errors';
import type { ProgressReporter } from './progress';
import { type ServiceStatus, stallCause } from './service-status';

/** How long --wait keeps asking an API that does not answer (a restarting stack, a network blip) before it gives up. */
export const WAIT_OUTAGE_MS = 120_000;

/** What --wait watches besides the batch: when to say why nothing moves, and when to give up. */
interface WaitWatch {
  /** Nothing moved for this long: one line saying why (again each such while). Default 30 s. */
  stallMs?: number;
  /** Gives up (WaitTimeoutError) after this long. */
  timeoutMs?: number;
  /** Why the service does not progress, where it knows (lib/cli/service-status.ts). */
  status?: () => Promise<ServiceStatus | undefined>;
}

/**
 * Reads the summary until the batch is done. A server without the :close route never closes a batch whose declared
 * files did not all arrive, so there the batch counts as done once the `sent` files are all classified. The files
 * are uploaded by then, so an API that stops answering for a while is waited for, up to `outageMs` in a row. When
 * nothing moves for `watch.stallMs` it says why, where the service knows, and waits on; `watch.timeoutMs` ends it.
 */
export async function waitUntilDone(
  client: ApiClient,
  batchId: string,
  sent: number,
  closeSupported: boolean,
  progress: ProgressReporter,
  pollMs: number,
  outageMs: number = WAIT_OUTAGE_MS,
  watch: WaitWatch = {},
): Promise<BatchSummary> {
  progress.classifyStarted(sent);
  let unansweredSince: number | undefined;
  const startedAt = Date.now();
  const stallMs = watch.stallMs ?? 30_000;
  let last: BatchSummary | undefined;
  let lastMove = '';
  let movedAt = startedAt;
  let notedAt = startedAt;
  let cause: string | undefined;
  try {
    for (;;) {
      if (watch.timeoutMs !== undefined && Date.now() - startedAt >= watch.timeoutMs) {
        last ??= await client.getBatch(batchId);
        const finished = last.counts.success + last.counts.fail + last.counts.duplicate;
        throw new WaitTimeoutError(
          `gave up waiting after ${Math.round(watch.timeoutMs / 1000)} s (--wait-timeout): batch ${batchId} is ${last.status}, ` +
            `${finished} of ${Math.max(last.expected ?? last.counts.total, finished)} classified${cause ? `; ${cause}` : ''}; ` +
            `the service goes on with it: icecat status ${batchId}`,
          { last },
        );
      }
      let s: BatchSummary;
      try {
        s = await client.getBatch(batchId);
        unansweredSince = undefined;
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        if (unansweredSince === undefined) {
          unansweredSince = Date.now();
          progress.note(`${err.message}; asking again for up to ${Math.round(outageMs / 1000)} s`);
        }
        if (Date.now() - unansweredSince >= outageMs) throw err;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        continue;
      }
      last = s;
      const finished = s.counts.success + s.counts.fail + s.counts.duplicate;
      const of = Math.max(s.expected ?? s.counts.total, finished, closeSupported ? 0 : sent);
      progress.classified(finished, of);
      if (s.status === 'done' || (!closeSupported && s.counts.total >= sent && finished >= s.counts.total)) return s;
      const move = `${s.status} ${s.counts.total} ${finished}`;
      if (move !== lastMove) {
        lastMove = move;
        movedAt = notedAt = Date.now();
      } else if (Date.now() - notedAt >= stallMs) {
        notedAt = Date.now();
        cause = stallCause(await watch.status?.());
        const why =
          cause ?? (watch.status ? 'the service reports no fault (a long queue, or a slow detector)' : 'the service cannot be asked why');
        progress.note(
          `nothing has moved for ${Math.round((notedAt - movedAt) / 1000)} s (${finished} of ${of} classified): ${why}; still waiting`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    progress.classifyEnded();
  }
}
