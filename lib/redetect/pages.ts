// The start of a re-detection run, a page at a time (docs/decisions/0039-redetect-runs.md): the run is taken before
// this; each page of the batch's records is read, its chosen images charged on the day's usage item (once, whoever
// starts the page and however often), marked for the run, counted on the summary by a move that holds only from the
// page read, and only then queued. A call starts pages for its time budget; the rest is started by the next call or
// the reconcile sweep (lib/redetect/resume.ts). A crash between two steps leaves a page that is started again whole:
// its charge is not made twice, its marks are the same, its move is made once; messages a crash kept from being sent
// are queued again by a resume.
import type { Batch } from '../domain/batch';
import type { Image } from '../domain/image';
import type { JobQueue } from '../jobs/queue';
import { answeredByCurrentModel } from '../model-version';
import type { ClientLimits } from '../quota/limits';
import type { AnswerOutcome } from '../store/redetect/answers';
import type { CandidatePage, RedetectCandidate } from '../store/redetect/images';
import type { RedetectRuns } from '../store/redetect/run';
import { FIRST_PAGE, type RunState, START_PAGE } from '../store/redetect/run-state';
import { encodeRedetectMessage } from './message';

/**
 * What a re-detection's plan, its pages and their resume ask of the store, and only that (lib/store/redetect/images.ts
 * Redetections implements it; a test may hand a fake): the batch, the run on its summary, the plan's pages of records
 * and the marks on them, the images still owed, and the run's end.
 */
export interface RedetectRunStore {
  getBatch(clientId: string, batchId: string): Promise<Batch | undefined>;
  runs: Pick<RedetectRuns, 'take' | 'state' | 'charge' | 'giveBack' | 'move' | 'stopPaging' | 'release' | 'takeResume'>;
  candidates(clientId: string, batchId: string): AsyncIterable<RedetectCandidate[]>;
  page(clientId: string, batchId: string, after?: string, limit?: number): Promise<CandidatePage>;
  mark(clientId: string, batchId: string, fprints: readonly string[], run: string): Promise<string[]>;
  owedImages(clientId: string, batchId: string, run: string): Promise<string[]>;
  getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined>;
  /** Gives up an image (no answer): it keeps the one it had, and is counted as done. */
  answer(image: Image, run: string, answer: undefined): Promise<AnswerOutcome>;
  settle(clientId: string, batchId: string, run: string): Promise<Batch | undefined>;
}

export interface PagingDeps {
  redetections: RedetectRunStore;
  /** The uploads queue the ingest reads. */
  queue: JobQueue;
  limitsOf?: (clientId: string) => Promise<ClientLimits>;
  now?: () => number;
  /** Records per page (tests make it small). */
  pageSize?: number;
}

/** What a call (or a sweep) started of a run. */
export interface PagesStarted {
  /** DetectLabels calls charged and queued (distinct images marked). */
  calls: number;
  /** The uploads they answer (with duplicates). */
  images: number;
  /** The day's images ran out before a page could be charged. */
  overQuota?: { limits: ClientLimits; asked: number };
}

export const NOTHING_STARTED: PagesStarted = { calls: 0, images: 0 };

/** Whether the run chooses the image: every one with `all`, else one answered by another model than the run's. */
const chosenBy = (state: RunState) => (c: RedetectCandidate) =>
  state.all || state.model === undefined || !answeredByCurrentModel(c.facts, state.model);

/**
 * Starts pages of `run` from where its summary says, until every page is started or `deadline` passes (one page at
 * least). When the paging is over, a run that charged nothing is given back, and one owing nothing any more ends.
 */
export async function startPages(
  deps: PagingDeps,
  clientId: string,
  batchId: string,
  run: string,
  deadline: number,
): Promise<PagesStarted> {
  const { redetections } = deps;
  const now = deps.now ?? Date.now;
  const started = { calls: 0, images: 0 } as PagesStarted;
  let state = await redetections.runs.state(clientId, batchId);
  let pages = 0;
  while (state?.run === run && state.next !== undefined && (pages === 0 || now() < deadline)) {
    pages += 1;
    const from: string = state.next;
    const page = await redetections.page(clientId, batchId, from === FIRST_PAGE ? undefined : from, deps.pageSize ?? START_PAGE);
    const chosen = page.candidates.filter(chosenBy(state));
    const next = page.more ? page.last : undefined;
    const limits = chosen.length > 0 && deps.limitsOf ? await deps.limitsOf(clientId) : undefined;
    const charge =
      limits && page.last !== undefined
        ? await redetections.runs.charge(clientId, state.day, { run, last: page.last, n: chosen.length }, limits.maxImagesPerDay)
        : 'charged-before';
    if (charge === 'over-quota' && limits) {
      started.overQuota = { limits, asked: chosen.length };
      state = (await redetections.runs.stopPaging(clientId, batchId, run, from)) ?? (await redetections.runs.state(clientId, batchId));
      break;
    }
    const marked = new Set(
      await redetections.mark(
        clientId,
        batchId,
        chosen.map((c) => c.fprint),
        run,
      ),
    );
    // Charged for images that turned out not to be owed (no longer classified): given back.
    if (charge === 'charged') await redetections.runs.giveBack(clientId, state.day, chosen.length - marked.size);
    const owed = chosen.filter((c) => marked.has(c.fprint));
    const uploads = owed.reduce((sum, c) => sum + 1 + c.duplicates, 0);
    const moved = await redetections.runs.move(clientId, batchId, {
      run,
      from,
      ...(next !== undefined ? { next } : {}),
      marked: owed.length,
      uploads,
    });
    if (!moved) {
      // Another pager counted this page first and queues its images: go on from where it is.
      state = await redetections.runs.state(clientId, batchId);
      continue;
    }
    await queueImages(
      deps.queue,
      clientId,
      batchId,
      run,
      owed.map((c) => c.fprint),
    );
    started.calls += owed.length;
    started.images += uploads;
    state = moved;
  }
  if (state?.run === run && state.next === undefined) await settleStarted(redetections, clientId, batchId, state);
  return started;
}

/** Once every page is started: a run that charged nothing is given back; one that owes nothing any more ends. */
async function settleStarted(
  redetections: RedetectRunStore,
  clientId: string,
  batchId: string,
  state: RunState,
): Promise<Batch | undefined> {
  if (state.calls === 0) return redetections.runs.release(clientId, batchId, state.run);
  if (state.left <= 0) return redetections.settle(clientId, batchId, state.run);
  return undefined;
}

const QUEUED_AT_ONCE = 10;

export async function queueImages(
  queue: JobQueue,
  clientId: string,
  batchId: string,
  run: string,
  fprints: readonly string[],
): Promise<void> {
  for (let i = 0; i < fprints.length; i += QUEUED_AT_ONCE) {
    await Promise.all(
      fprints.slice(i, i + QUEUED_AT_ONCE).map((fprint) => queue.send(encodeRedetectMessage({ clientId, batchId, fprint, run }))),
    );
  }
}
