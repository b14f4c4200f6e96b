// A re-detection's images (docs/api.md "Re-detect", docs/decisions/0033-redetect.md): the plan's pages of a batch's
// records, the mark on each image a run owes an answer (rd_run), and the images still owed; their requests beside the
// methods sending them. The run is held by the summary (rd_run, rd_left: the batch reads `processing`, run.ts); an
// image's answer and the run's end are answers.ts. `Redetections` is the one object the plan, the pages, the job and the
// sweep are handed.
import { QueryCommand, type QueryCommandInput, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import type { Image } from '../../domain/image';
import type { RecordModelFacts } from '../../model-version';
import type { BatchCounters } from '../batch/counters';
import { getImageRecord } from '../image/record';
import { imageNames } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { decodeDetections } from '../table/detections';
import { BATCH_SK, batchPartition, type ImageItem, imageKey } from '../table/schema';
import { type AnswerOutcome, type NewAnswer, RedetectAnswers } from './answers';
import { RedetectRuns } from './run';
import { IMAGE_RUN_NAMES, imageRunWrite } from './run-state';

/** What the plan reads of each record: enough to choose it (its model facts) and count it (its duplicates). */
function planPageQuery(table: string, clientId: string, batchId: string, limit: number, afterFprint?: string): QueryCommandInput {
  const [start, value] = afterFprint === undefined ? [':summary', BATCH_SK] : [':after', afterFprint];
  return {
    TableName: table,
    KeyConditionExpression: `#partition = :partition AND #fprint > ${start}`,
    ProjectionExpression:
      '#fprint, #status, #model, #detection.#lmv, #detections, #classifiedAt, #duplicates, #redetectRun, #rdAt, #rdClaim, #rdLast',
    ExpressionAttributeNames: {
      ...imageNames('partition', 'fprint', 'status', 'model', 'detection', 'detections', 'classifiedAt', 'duplicates', 'redetectRun'),
      '#lmv': 'model',
      ...IMAGE_RUN_NAMES,
    },
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), [start]: value },
    ConsistentRead: true,
    Limit: limit,
  };
}

/**
 * Marks a classified image as owed an answer by the run that holds the batch (taken first: lib/store/redetect/run.ts),
 * queued at `now`; never one the run has answered already (a page started again after a crash, or by a slower pager).
 */
export function markImageRequest(
  table: string,
  clientId: string,
  batchId: string,
  fprint: string,
  run: string,
  nowMs: number,
): UpdateCommandInput {
  const w = imageRunWrite().set('redetectRun', ':run', run).set('rdAt', ':now', nowMs);
  w.when(w.is('status', '=', ':success', 'success'), w.or(w.notExists('rdLast'), w.is('rdLast', '<>', ':run', run)));
  return { TableName: table, Key: imageKey(clientId, batchId, fprint), ...w.update() };
}

/** A classified image of the batch as the plan sees it. */
export interface RedetectCandidate {
  fprint: string;
  /** What it says of the model its answer came from (lib/model-version.ts answeredByCurrentModel reads it). */
  facts: RecordModelFacts;
  /** Later uploads of the same pixels: they follow the answer, at no call of their own. */
  duplicates: number;
  /** The run that still owes it an answer, if any. */
  run?: string;
  /** Epoch ms: when that run queued its message. */
  queuedAt?: number;
  /** Epoch ms: until when a delivery of that message holds it (the claim before DetectLabels is paid). */
  claimedUntil?: number;
}

/** One page of a batch's records as the plan reads it: its classified images, and where the next page starts. */
export interface CandidatePage {
  candidates: RedetectCandidate[];
  /** The last record read (the page's end), undefined on an empty page. */
  last?: string;
  /** Whether records follow the page. */
  more: boolean;
}

/** Records per page: the dry run reads 500 at a time; a start pages 100 at a time, each page charged, marked and queued. */
const PLAN_PAGE = 500;
const MARKS_AT_ONCE = 16;

export class Redetections {
  /** The run's state and the writes that move it: taken, paged, claimed, resumed (redetect-run.ts). */
  readonly runs: RedetectRuns;

  private readonly answers: RedetectAnswers;

  constructor(
    private readonly store: BatchCounters,
    /** The completion hook (callback, event) of a batch done again. */
    onDone?: (batch: Batch) => Promise<void>,
  ) {
    this.runs = new RedetectRuns(store);
    this.answers = new RedetectAnswers(store, (clientId, batchId, run) => this.owedImages(clientId, batchId, run), onDone);
  }

  /** Every record of the batch, a page at a time: its classified images with their model. */
  async *candidates(clientId: string, batchId: string): AsyncGenerator<RedetectCandidate[]> {
    let after: string | undefined;
    do {
      const page = await this.page(clientId, batchId, after);
      yield page.candidates;
      after = page.more ? page.last : undefined;
    } while (after !== undefined);
  }

  /** The page of records after `after` (from the first without it). */
  async page(clientId: string, batchId: string, after?: string, limit = PLAN_PAGE): Promise<CandidatePage> {
    const out = await this.store.ddb.send(new QueryCommand(planPageQuery(this.store.table, clientId, batchId, limit, after)));
    const items = (out.Items ?? []) as ImageItem[];
    const last = items.at(-1)?.img_fprint;
    return {
      candidates: items.filter((item) => item.op_status === 'success').map(candidateOf),
      ...(last !== undefined ? { last } : {}),
      more: out.LastEvaluatedKey !== undefined && last !== undefined,
    };
  }

  /**
   * Marks the images as owed an answer by `run`, which holds the batch; answers those marked (an image no longer
   * classified, or answered by this run already, is left).
   */
  async mark(clientId: string, batchId: string, fprints: readonly string[], run: string): Promise<string[]> {
    const marked: string[] = [];
    const now = this.store.now();
    for (let i = 0; i < fprints.length; i += MARKS_AT_ONCE) {
      await Promise.all(
        fprints.slice(i, i + MARKS_AT_ONCE).map(async (fprint) => {
          try {
            await this.store.ddb.send(new UpdateCommand(markImageRequest(this.store.table, clientId, batchId, fprint, run, now)));
            marked.push(fprint);
          } catch (err) {
            if (!conditionFailed(err)) throw err;
          }
        }),
      );
    }
    return marked;
  }

  async getBatch(clientId: string, batchId: string): Promise<Batch | undefined> {
    return this.store.batches.getBatch(clientId, batchId);
  }

  async getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    return getImageRecord(this.store, clientId, batchId, fprint);
  }

  /** Writes the image's new answer (none: DetectLabels refused it) and counts it; the last ends the run (answers.ts). */
  answer(image: Image, run: string, answer: NewAnswer | undefined): Promise<AnswerOutcome> {
    return this.answers.answer(image, run, answer);
  }

  /** Ends the run once it owes no image an answer (answers.ts). */
  settle(clientId: string, batchId: string, run: string): Promise<Batch | undefined> {
    return this.answers.settle(clientId, batchId, run);
  }

  /** The images `run` still owes an answer, from their marks. */
  async owedImages(clientId: string, batchId: string, run: string): Promise<string[]> {
    const owed: string[] = [];
    for await (const page of this.candidates(clientId, batchId)) owed.push(...page.filter((c) => c.run === run).map((c) => c.fprint));
    return owed;
  }
}

const candidateOf = (item: ImageItem): RedetectCandidate => {
  const run = item as ImageItem & { rd_at?: number; rd_claim?: number };
  return {
    fprint: item.img_fprint,
    facts: modelFactsOf(item),
    duplicates: item.dup_count ?? 0,
    ...(item.rd_run !== undefined ? { run: item.rd_run } : {}),
    ...(typeof run.rd_at === 'number' ? { queuedAt: run.rd_at } : {}),
    ...(typeof run.rd_claim === 'number' ? { claimedUntil: run.rd_claim } : {}),
  };
};

/** A record's model facts as the plan reads them: its model, else its boxes' (or labels') model string and its time. */
function modelFactsOf(item: ImageItem): RecordModelFacts {
  const detections = decodeDetections(item.rek_dets) ?? item.rek_resp;
  return {
    ...(item.rek_model ? { model: { name: item.rek_model.name, version: item.rek_model.version } } : {}),
    ...(detections ? { detections: { model: detections.model } } : {}),
    ...(typeof item.rek_ts === 'number' ? { classifiedAt: item.rek_ts } : {}),
  };
}
