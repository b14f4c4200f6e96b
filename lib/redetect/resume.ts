// A re-detection run looked after (docs/decisions/0039-redetect-runs.md), by the reconcile sweep and by a
// POST …:redetect that finds the run going: a start whose pager stopped (its call ended its time budget, or died) is
// paged on; a run every page of which is started, that saw no answer come for a whole grace and owes images that are
// in no one's hands (queued longer ago than the grace and not claimed: a message a crash kept from being sent, or one
// gone to the dead letters), has them queued again — at most once per grace; after MAX_RESUMES such resumes in a row
// the run ends instead: those images keep the answer they had, as an image DetectLabels refuses does. A run owing
// nothing ends.
import type { Image } from '../domain/image';
import { NOTHING_STARTED, type PagesStarted, type PagingDeps, queueImages, startPages } from './pages';

export interface ResumeDeps extends PagingDeps {
  /**
   * An image queued longer ago than this, and not claimed, in a run no answer reached for as long, is in no one's hands
   * (the reconcile sweep's grace: RECONCILE_GRACE_SECONDS on AWS, ICECAT_RECONCILE_GRACE_SECONDS locally).
   */
  graceMs: number;
}

/** A start whose last page is older than this has no pager: the batches function stops after 10 s. */
const PAGER_STALL_MS = 10_000;

/** Resumes in a row that saw no answer come, before the run ends with what it has. */
const MAX_RESUMES = 3;

interface Resumed extends PagesStarted {
  /** Images queued again. */
  requeued: number;
  /** Images given up (the run ended without their answer). */
  forgone: number;
}

/** Looks after the batch's run, if it has one; answers what it started, queued again or gave up. */
export async function resumeRun(deps: ResumeDeps, clientId: string, batchId: string, deadline: number): Promise<Resumed> {
  const { redetections } = deps;
  const now = (deps.now ?? Date.now)();
  const none = { ...NOTHING_STARTED, requeued: 0, forgone: 0 };
  const state = await redetections.runs.state(clientId, batchId);
  if (!state) return none;
  if (state.next !== undefined) {
    if (now - state.movedAt < Math.min(PAGER_STALL_MS, deps.graceMs)) return none;
    return { ...none, ...(await startPages(deps, clientId, batchId, state.run, deadline)) };
  }
  if (state.left <= 0) {
    await redetections.settle(clientId, batchId, state.run);
    return none;
  }
  if (state.resumedAt !== undefined && now - state.resumedAt < deps.graceMs) return none;
  const owed = await redetections.owedImages(clientId, batchId, state.run);
  if (owed.length === 0) {
    // Every image answered, and rd_left above 0: a counter move a crash lost (without transactions). The settle counts
    // what the marks say, and ends the run.
    await redetections.settle(clientId, batchId, state.run);
    return none;
  }
  if (state.seen !== state.left) {
    // An answer came since the last look (or this is the first): the messages are being consumed, however slowly (a
    // long queue). Only the look is recorded; images are queued again only after a whole grace with no answer at all.
    await redetections.runs.takeResume(clientId, batchId, state, 0);
    return none;
  }
  const idle: string[] = [];
  for await (const page of redetections.candidates(clientId, batchId))
    for (const c of page)
      if (c.run === state.run && (c.claimedUntil ?? 0) < now && (c.queuedAt ?? 0) < now - deps.graceMs) idle.push(c.fprint);
  if (idle.length === 0) return none;
  const resumes = state.resumes + 1;
  if (!(await redetections.runs.takeResume(clientId, batchId, state, resumes))) return none;
  if (resumes <= MAX_RESUMES) {
    await queueImages(deps.queue, clientId, batchId, state.run, idle);
    return { ...none, requeued: idle.length };
  }
  let forgone = 0;
  for (const fprint of idle) {
    const image: Image | undefined = await redetections.getImage(clientId, batchId, fprint);
    if (image?.redetectRun === state.run && (await redetections.answer(image, state.run, undefined)) === 'answered') forgone += 1;
  }
  return { ...none, forgone };
}
