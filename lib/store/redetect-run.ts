// A re-detection run's state on the batch summary and the writes that move it (docs/decisions/0039-redetect-runs.md):
// the run taken first, conditionally; each page of its start charged once (a token on the day's usage item), then
// counted on the summary from the page it read; an image claimed before DetectLabels is paid for it; a resume taken at
// most once a while; the run given back when it started nothing. The requests are redetect-run-writes.ts.
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../domain/batch';
import type { ModelVersion } from '../domain/detection';
import type { BatchStore } from './batch-store';
import { conditionFailed } from './batch-summary';
import { usageKey } from './client-limits';
import {
  chargedAlready,
  chargePageRequest,
  claimImageRequest,
  giveBackRequest,
  pageMoveRequest,
  releaseRunRequest,
  resumeRequest,
  stopPagingRequest,
  takeRunRequest,
  type RunChoice,
} from './redetect-run-writes';
import { batchKey } from './schema';

/** A run as its summary holds it. */
export interface RunState {
  run: string;
  /** Images marked and not answered yet. */
  left: number;
  /** Where the start's next page begins; undefined once every page is started. */
  next?: string;
  all: boolean;
  model?: ModelVersion;
  day: string;
  /** Epoch ms of the start's last page (or of the run taken). */
  movedAt: number;
  /** Re-detections charged (DetectLabels calls owed), and the uploads they answer. */
  calls: number;
  images: number;
  resumedAt?: number;
  /** Resumes in a row that saw no answer come. */
  resumes: number;
  /** rd_left at the last resume. */
  seen?: number;
}

export function runStateOf(item: Record<string, unknown> | undefined): RunState | undefined {
  if (typeof item?.rd_run !== 'string') return undefined;
  const num = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0));
  const model = item.rd_model as ModelVersion | undefined;
  return {
    run: item.rd_run,
    left: num(item.rd_left),
    ...(typeof item.rd_next === 'string' ? { next: item.rd_next } : {}),
    all: item.rd_all === true,
    ...(model && typeof model.name === 'string' ? { model: { name: model.name, version: String(model.version) } } : {}),
    day: String(item.rd_day ?? ''),
    movedAt: num(item.rd_moved),
    calls: num(item.rd_calls),
    images: num(item.rd_images),
    ...(typeof item.rd_resumed === 'number' ? { resumedAt: item.rd_resumed } : {}),
    resumes: num(item.rd_resumes),
    ...(typeof item.rd_seen === 'number' ? { seen: item.rd_seen } : {}),
  };
}

/** How a page's charge went: charged now, charged before (a page started again), or beyond the day's images. */
export type ChargeOutcome = 'charged' | 'charged-before' | 'over-quota';

export class RedetectRuns {
  constructor(private readonly store: BatchStore) {}

  /** Takes the run on a done batch running no other: undefined when another holds it (or it is not done, or gone). */
  async take(clientId: string, batchId: string, run: string, choice: RunChoice): Promise<Batch | undefined> {
    return this.store.conditionalUpdate(takeRunRequest(this.store.table, clientId, batchId, run, choice, this.store.now()));
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
    return this.store.conditionalUpdate(releaseRunRequest(this.store.table, clientId, batchId, run));
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
