// A re-detection's writes and the reads they depend on (docs/api.md "Re-detect", docs/decisions/0033-redetect.md).
// The run is held by the summary (rd_run, rd_left: the batch reads `processing`) and by a mark on each image it owes an
// answer (rd_run). An answer and its counter move (rd_left − 1, cats, corrected, reused) are one transaction where the
// backend has them; without (dynalite) they are two writes, and a crash between them is repaired when the image's
// message comes again and finds its answer written: the batch is recounted from its records (counters and what the run
// has left), as an upload's redelivery is. The last answer ends the run: done again, callback owed again.
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import type { Image } from '../../domain/image';
import type { RecordModelFacts } from '../../model-version';
import type { BatchCounters } from '../batch/counters';
import { getImageRecord } from '../image/record';
import { conditionFailed, conditionFailedAt } from '../table/condition';
import { decodeDetections } from '../table/detections';
import type { ImageItem } from '../table/schema';
import { transaction, transactWrite } from '../table/transact';
import {
  answerCounts,
  answerRequest,
  endRequest,
  forgoRequest,
  leftRequest,
  markImageRequest,
  moveRequest,
  type NewAnswer,
  planPageQuery,
} from './image-writes';
import { RedetectRuns } from './run';

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

/** How an image's answer went: written (and counted), written before (a message delivered again), or the run is over. */
export type AnswerOutcome = 'answered' | 'answered-before' | 'run-over';

/** Records per page: the dry run reads 500 at a time; a start pages 100 at a time, each page charged, marked and queued. */
const PLAN_PAGE = 500;
const MARKS_AT_ONCE = 16;

export class Redetections {
  /** The run's state and the writes that move it: taken, paged, claimed, resumed (redetect-run.ts). */
  readonly runs: RedetectRuns;

  constructor(
    private readonly store: BatchCounters,
    /** The completion hook (callback, event) of a batch done again. */
    private readonly onDone?: (batch: Batch) => Promise<void>,
  ) {
    this.runs = new RedetectRuns(store);
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

  /**
   * Writes the image's new answer and counts it, then ends the run when it was the last. Without an answer (DetectLabels
   * refused the image outright) the image keeps the one it had and is counted as done.
   */
  async answer(image: Image, run: string, answer: NewAnswer | undefined): Promise<AnswerOutcome> {
    const { table } = this.store;
    const record = answer ? answerRequest(table, image, run, answer, this.store.now()) : forgoRequest(table, image, run);
    const delta = answer ? answerCounts(image, answer) : {};
    const move = moveRequest(table, image.clientId, image.batchId, run, delta, this.store.now());
    let left: number | undefined;
    if (this.store.transactions) {
      try {
        await transactWrite(this.store.ddb, transaction(record, move));
      } catch (err) {
        if (conditionFailedAt(err, 0)) return 'answered-before';
        if (conditionFailedAt(err, 1)) return 'run-over';
        throw err;
      }
    } else {
      try {
        await this.store.ddb.send(new UpdateCommand(record));
      } catch (err) {
        if (conditionFailed(err)) return 'answered-before';
        throw err;
      }
      // A crash here leaves the move undone: the message comes again, finds the answer written, and settle() recounts.
      const after = await this.store.batches.conditionalUpdate(move);
      if (!after) return 'run-over';
      left = after.redetecting?.left;
    }
    if (left === undefined || left <= 0) await this.settle(image.clientId, image.batchId, run);
    return 'answered';
  }

  /**
   * Ends the run once it owes no image an answer. Without transactions the records are the truth: the batch is recounted
   * (a counter move a crash lost) and what the run has left is set from the marks still there, before it may end.
   */
  async settle(clientId: string, batchId: string, run: string): Promise<Batch | undefined> {
    const batch = await this.store.batches.getBatch(clientId, batchId);
    if (!batch || !this.store.batches.isLive(batch) || batch.redetecting?.run !== run) return batch;
    if (!this.store.transactions) {
      await this.store.recount(clientId, batchId);
      const left = await this.owed(clientId, batchId, run);
      if (left !== batch.redetecting.left) {
        const set = await this.store.batches.conditionalUpdate(
          leftRequest(this.store.table, clientId, batchId, run, batch.redetecting.left, left),
        );
        if (!set) return this.store.batches.getBatch(clientId, batchId); // moved meanwhile: the image that moved it settles
      }
      if (left > 0) return batch;
    } else if (batch.redetecting.left > 0) return batch;
    const done = await this.store.batches.conditionalUpdate(
      endRequest(this.store.table, clientId, batchId, run, this.store.now(), batch.callbackUrl !== undefined),
    );
    if (done) await this.onDone?.(done);
    return done ?? (await this.store.batches.getBatch(clientId, batchId));
  }

  /** The images `run` still owes an answer, from their marks. */
  async owedImages(clientId: string, batchId: string, run: string): Promise<string[]> {
    const owed: string[] = [];
    for await (const page of this.candidates(clientId, batchId)) owed.push(...page.filter((c) => c.run === run).map((c) => c.fprint));
    return owed;
  }

  private async owed(clientId: string, batchId: string, run: string): Promise<number> {
    return (await this.owedImages(clientId, batchId, run)).length;
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
