// A re-detection run's state on the batch summary and the writes that move it (docs/decisions/0039-redetect-runs.md),
// each request a pure builder beside the method that sends it: the run taken first, conditionally; each page of its
// start charged once (a token on the day's usage item naming the run and the page), marked, then counted on the
// summary by a move that holds only from the page it read; an image claimed before DetectLabels is paid for it; a
// resume taken at most once a while; the run given back when it started nothing.
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import type { ModelVersion } from '../../domain/detection';
import type { BatchCounters } from '../batch/counters';
import { liveBatch } from '../batch/summary';
import { usageKey, usagePurgeAt, usageWrite } from '../client/limits';
import { conditionFailed } from '../table/condition';
import { batchKey, imageKey } from '../table/schema';
import { FIRST_PAGE, imageRunWrite, REDETECT_LIVE, RUN_PARTS, type RunState, runStateOf, runWrite } from './run-state';

/** What the run was asked: every image (`all`), or those answered by another model than `model`. */
export interface RunChoice {
  all: boolean;
  model?: ModelVersion;
  /** The UTC day its re-detections are counted on. */
  day: string;
}

/** Takes the run on a done, live batch that runs no other: nothing is charged nor marked before this holds. */
export function takeRunRequest(
  table: string,
  clientId: string,
  batchId: string,
  run: string,
  choice: RunChoice,
  nowMs: number,
): UpdateCommandInput {
  const w = runWrite()
    .set('rdRun', ':run', run)
    .set('rdLive', ':live', REDETECT_LIVE)
    .set('rdLeft', ':zero', 0)
    .set('rdNext', ':first', FIRST_PAGE)
    .set('rdAll', ':all', choice.all)
    .set('rdDay', ':day', choice.day)
    .set('rdMoved', ':now', nowMs)
    .set('rdCalls', ':zero', 0)
    .set('rdImages', ':zero', 0);
  if (choice.model) w.set('rdModel', ':model', { name: choice.model.name, version: choice.model.version });
  w.when(liveBatch(w, nowMs), w.exists('doneAt'), w.notExists('rdRun'));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** The usage item's attribute that remembers the last page of `run` it was charged for. */
const chargeToken = (run: string) => `rd_${run}`;

/**
 * Charges a page's `n` re-detections on the day's usage item, unless beyond `limit` or already charged: the token is the
 * page's last fingerprint, and pages go in fingerprint order, so a page charged (by a crashed start, or a slower pager
 * on the same page) is never charged again.
 */
export function chargePageRequest(
  table: string,
  clientId: string,
  day: string,
  page: { run: string; last: string; n: number },
  limit: number,
  nowMs: number,
): UpdateCommandInput {
  const w = usageWrite({ token: chargeToken(page.run) });
  const last = w.val(':last', page.last);
  const limitValue = w.val(':limit', limit);
  w.add('accepted', ':n', page.n).setIfNotExists('purgeAt', ':purge', usagePurgeAt(nowMs)).set('token', last);
  w.when(
    w.or(w.notExists('token'), w.compare('token', '<', last)),
    w.or(w.and(w.notExists('accepted'), w.compare(w.val(':n', page.n), '<=', limitValue)), w.is('accepted', '<=', ':room', limit - page.n)),
  );
  return { TableName: table, Key: usageKey(clientId, day), ...w.update() };
}

/** Whether the usage item says the page ending at `last` was charged to `run` already. */
export const chargedAlready = (usage: Record<string, unknown> | undefined, run: string, last: string): boolean => {
  const token = usage?.[chargeToken(run)];
  return typeof token === 'string' && token >= last;
};

/** Gives back `n` re-detections charged for images that were not marked after all. */
export function giveBackRequest(table: string, clientId: string, day: string, n: number): UpdateCommandInput {
  const w = usageWrite().add('accepted', ':minus', -n);
  return { TableName: table, Key: usageKey(clientId, day), ...w.when(w.exists('accepted')).update() };
}

/**
 * Counts a page on the summary, only from the page it read (`from`): its marked images owed (rd_left) and charged, its
 * uploads, and where the next page starts; the last page (`next` undefined) ends the paging.
 */
export function pageMoveRequest(
  table: string,
  clientId: string,
  batchId: string,
  move: { run: string; from: string; next?: string; marked: number; uploads: number },
  nowMs: number,
): UpdateCommandInput {
  const w = runWrite().set('rdMoved', ':now', nowMs);
  if (move.next !== undefined) w.set('rdNext', ':next', move.next);
  w.add('rdLeft', ':marked', move.marked).add('rdCalls', ':marked', move.marked).add('rdImages', ':uploads', move.uploads);
  if (move.next === undefined) w.remove('rdNext');
  w.when(w.is('rdRun', '=', ':run', move.run), w.is('rdNext', '=', ':from', move.from));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** Gives the run back when its paging is over and it charged nothing: the batch is done as it was, not done again. */
export function releaseRunRequest(table: string, clientId: string, batchId: string, run: string): UpdateCommandInput {
  const w = runWrite().remove(...RUN_PARTS);
  w.when(w.is('rdRun', '=', ':run', run), w.notExists('rdNext'), w.is('rdCalls', '=', ':zero', 0));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** Ends the paging where it is (the day's images ran out): the run goes on with the pages it started. */
export function stopPagingRequest(table: string, clientId: string, batchId: string, run: string, from: string): UpdateCommandInput {
  const w = runWrite().remove('rdNext');
  w.when(w.is('rdRun', '=', ':run', run), w.is('rdNext', '=', ':from', from));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/**
 * Claims an image for the run before DetectLabels is paid for it (as the ingest claims a fingerprint): only while the
 * run still owes it an answer and no other delivery holds a live lease on it.
 */
export function claimImageRequest(
  table: string,
  image: { clientId: string; batchId: string; fprint: string },
  run: string,
  untilMs: number,
  nowMs: number,
): UpdateCommandInput {
  const w = imageRunWrite().set('rdClaim', ':until', untilMs);
  w.when(w.is('redetectRun', '=', ':run', run), w.or(w.notExists('rdClaim'), w.is('rdClaim', '<', ':now', nowMs)));
  return { TableName: table, Key: imageKey(image.clientId, image.batchId, image.fprint), ...w.update() };
}

/**
 * Takes one resume of the run (its owed images not in flight queued again): at most once per `graceMs`, and only from
 * the state read (`was`, the last resume's time), so that two sweeps or calls never both resume. `resumes` counts the
 * resumes in a row that saw no answer come (what rd_left was at the last one, `seen`).
 */
export function resumeRequest(
  table: string,
  clientId: string,
  batchId: string,
  resume: { run: string; was?: number; resumes: number; left: number },
  nowMs: number,
): UpdateCommandInput {
  const w = runWrite().set('rdResumed', ':now', nowMs).set('rdResumes', ':resumes', resume.resumes).set('rdSeen', ':left', resume.left);
  const asRead = resume.was === undefined ? w.notExists('rdResumed') : w.is('rdResumed', '=', ':was', resume.was);
  w.when(w.is('rdRun', '=', ':run', resume.run), w.notExists('rdNext'), asRead);
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** How a page's charge went: charged now, charged before (a page started again), or beyond the day's images. */
export type ChargeOutcome = 'charged' | 'charged-before' | 'over-quota';

export class RedetectRuns {
  constructor(private readonly store: BatchCounters) {}

  /** Takes the run on a done batch running no other: undefined when another holds it (or it is not done, or gone). */
  async take(clientId: string, batchId: string, run: string, choice: RunChoice): Promise<Batch | undefined> {
    return this.store.batches.conditionalUpdate(takeRunRequest(this.store.table, clientId, batchId, run, choice, this.store.now()));
  }

  /** The run the batch is in, read from its summary. */
  async state(clientId: string, batchId: string): Promise<RunState | undefined> {
    const out = await this.store.ddb.send(
      new GetCommand({ TableName: this.store.table, Key: batchKey(clientId, batchId), ConsistentRead: true }),
    );
    return runStateOf(out.Item);
  }

  /** Charges a page (once, whoever starts it and however often), unless beyond the day's `limit`. */
  async charge(clientId: string, day: string, page: { run: string; last: string; n: number }, limit: number): Promise<ChargeOutcome> {
    try {
      await this.store.ddb.send(new UpdateCommand(chargePageRequest(this.store.table, clientId, day, page, limit, this.store.now())));
      return 'charged';
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
    const usage = await this.store.ddb.send(
      new GetCommand({ TableName: this.store.table, Key: usageKey(clientId, day), ConsistentRead: true }),
    );
    return chargedAlready(usage.Item, page.run, page.last) ? 'charged-before' : 'over-quota';
  }

  async giveBack(clientId: string, day: string, n: number): Promise<void> {
    if (n <= 0) return;
    try {
      await this.store.ddb.send(new UpdateCommand(giveBackRequest(this.store.table, clientId, day, n)));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
  }

  /** Counts a started page from the page read (`from`); undefined when another pager moved first (or the run is over). */
  async move(
    clientId: string,
    batchId: string,
    move: { run: string; from: string; next?: string; marked: number; uploads: number },
  ): Promise<RunState | undefined> {
    return this.update(pageMoveRequest(this.store.table, clientId, batchId, move, this.store.now()));
  }

  /** Ends the paging where it is: the run goes on with what it started. */
  async stopPaging(clientId: string, batchId: string, run: string, from: string): Promise<RunState | undefined> {
    return this.update(stopPagingRequest(this.store.table, clientId, batchId, run, from));
  }

  /** Gives the run back when it started nothing: the batch is done as it was. */
  async release(clientId: string, batchId: string, run: string): Promise<Batch | undefined> {
    return this.store.batches.conditionalUpdate(releaseRunRequest(this.store.table, clientId, batchId, run));
  }

  /** Claims an image for `run` for `leaseMs` before DetectLabels is paid for it; false when it is not owed or held. */
  async claim(image: { clientId: string; batchId: string; fprint: string }, run: string, leaseMs: number): Promise<boolean> {
    const now = this.store.now();
    try {
      await this.store.ddb.send(new UpdateCommand(claimImageRequest(this.store.table, image, run, now + leaseMs, now)));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  /** Takes one resume from the state read; undefined when another took it first. */
  async takeResume(clientId: string, batchId: string, state: RunState, resumes: number): Promise<RunState | undefined> {
    return this.update(
      resumeRequest(
        this.store.table,
        clientId,
        batchId,
        { run: state.run, ...(state.resumedAt !== undefined ? { was: state.resumedAt } : {}), resumes, left: state.left },
        this.store.now(),
      ),
    );
  }

  private async update(request: UpdateCommandInput): Promise<RunState | undefined> {
    try {
      const out = await this.store.ddb.send(new UpdateCommand(request));
      return runStateOf(out.Attributes);
    } catch (err) {
      if (conditionFailed(err)) return undefined;
      throw err;
    }
  }
}
