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
import { usageKey, usagePurgeAt } from '../client/limits';
import { batchNames } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { batchKey, imageKey } from '../table/schema';
import { FIRST_PAGE, REDETECT_LIVE, RUN_NAMES, RUN_REMOVE, type RunState, runNames, runStateOf } from './run-state';

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
  const live = liveBatch(nowMs);
  const set = [
    '#rdRun = :run',
    '#rdLive = :live',
    '#rdLeft = :zero',
    '#rdNext = :first',
    '#rdAll = :all',
    '#rdDay = :day',
    '#rdMoved = :now',
  ];
  set.push('#rdCalls = :zero', '#rdImages = :zero');
  if (choice.model) set.push('#rdModel = :model');
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `SET ${set.join(', ')}`,
    ConditionExpression: `${live.condition} AND attribute_exists(#doneAt) AND attribute_not_exists(#rdRun)`,
    ExpressionAttributeNames: {
      ...batchNames(...live.names, 'doneAt'),
      ...runNames('#rdRun', '#rdLive', '#rdLeft', '#rdNext', '#rdAll', '#rdDay', '#rdMoved', '#rdCalls', '#rdImages'),
      ...(choice.model ? runNames('#rdModel') : {}),
    },
    ExpressionAttributeValues: {
      ...live.values,
      ':run': run,
      ':live': REDETECT_LIVE,
      ':zero': 0,
      ':first': FIRST_PAGE,
      ':all': choice.all,
      ':day': choice.day,
      ':now': nowMs,
      ...(choice.model ? { ':model': { name: choice.model.name, version: choice.model.version } } : {}),
    },
    ReturnValues: 'ALL_NEW',
  };
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
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    UpdateExpression: 'ADD #accepted :n SET #purgeAt = if_not_exists(#purgeAt, :purge), #token = :last',
    ConditionExpression:
      '(attribute_not_exists(#token) OR #token < :last) AND ' +
      '((attribute_not_exists(#accepted) AND :n <= :limit) OR #accepted <= :room)',
    ExpressionAttributeNames: { '#accepted': 'accepted', '#purgeAt': 'purge_at', '#token': chargeToken(page.run) },
    ExpressionAttributeValues: {
      ':n': page.n,
      ':limit': limit,
      ':room': limit - page.n,
      ':purge': usagePurgeAt(nowMs),
      ':last': page.last,
    },
  };
}

/** Whether the usage item says the page ending at `last` was charged to `run` already. */
export const chargedAlready = (usage: Record<string, unknown> | undefined, run: string, last: string): boolean => {
  const token = usage?.[chargeToken(run)];
  return typeof token === 'string' && token >= last;
};

/** Gives back `n` re-detections charged for images that were not marked after all. */
export function giveBackRequest(table: string, clientId: string, day: string, n: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    UpdateExpression: 'ADD #accepted :minus',
    ConditionExpression: 'attribute_exists(#accepted)',
    ExpressionAttributeNames: { '#accepted': 'accepted' },
    ExpressionAttributeValues: { ':minus': -n },
  };
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
  const set = ['#rdMoved = :now', ...(move.next !== undefined ? ['#rdNext = :next'] : [])];
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression:
      `SET ${set.join(', ')} ADD #rdLeft :marked, #rdCalls :marked, #rdImages :uploads` +
      (move.next === undefined ? ' REMOVE #rdNext' : ''),
    ConditionExpression: '#rdRun = :run AND #rdNext = :from',
    ExpressionAttributeNames: runNames('#rdRun', '#rdLeft', '#rdNext', '#rdMoved', '#rdCalls', '#rdImages'),
    ExpressionAttributeValues: {
      ':run': move.run,
      ':from': move.from,
      ':now': nowMs,
      ':marked': move.marked,
      ':uploads': move.uploads,
      ...(move.next !== undefined ? { ':next': move.next } : {}),
    },
    ReturnValues: 'ALL_NEW',
  };
}

/** Gives the run back when its paging is over and it charged nothing: the batch is done as it was, not done again. */
export function releaseRunRequest(table: string, clientId: string, batchId: string, run: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `REMOVE ${RUN_REMOVE}`,
    ConditionExpression: '#rdRun = :run AND attribute_not_exists(#rdNext) AND #rdCalls = :zero',
    ExpressionAttributeNames: RUN_NAMES,
    ExpressionAttributeValues: { ':run': run, ':zero': 0 },
    ReturnValues: 'ALL_NEW',
  };
}

/** Ends the paging where it is (the day's images ran out): the run goes on with the pages it started. */
export function stopPagingRequest(table: string, clientId: string, batchId: string, run: string, from: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'REMOVE #rdNext',
    ConditionExpression: '#rdRun = :run AND #rdNext = :from',
    ExpressionAttributeNames: runNames('#rdRun', '#rdNext'),
    ExpressionAttributeValues: { ':run': run, ':from': from },
    ReturnValues: 'ALL_NEW',
  };
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
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: 'SET #claim = :until',
    ConditionExpression: '#rdRun = :run AND (attribute_not_exists(#claim) OR #claim < :now)',
    ExpressionAttributeNames: { '#rdRun': 'rd_run', '#claim': 'rd_claim' },
    ExpressionAttributeValues: { ':run': run, ':until': untilMs, ':now': nowMs },
  };
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
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #rdResumed = :now, #rdResumes = :resumes, #rdSeen = :left',
    ConditionExpression:
      '#rdRun = :run AND attribute_not_exists(#rdNext) AND ' +
      (resume.was === undefined ? 'attribute_not_exists(#rdResumed)' : '#rdResumed = :was'),
    ExpressionAttributeNames: runNames('#rdRun', '#rdNext', '#rdResumed', '#rdResumes', '#rdSeen'),
    ExpressionAttributeValues: {
      ':run': resume.run,
      ':now': nowMs,
      ':resumes': resume.resumes,
      ':left': resume.left,
      ...(resume.was !== undefined ? { ':was': resume.was } : {}),
    },
    ReturnValues: 'ALL_NEW',
  };
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
