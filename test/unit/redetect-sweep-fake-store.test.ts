// The reconcile sweep's look after re-detection runs (lib/reconcile/redetect-runs.ts, lib/redetect/resume.ts) against a
// hand-written fake of the one interface it asks of the store (RedetectRunStore, lib/redetect/pages.ts): no DynamoDB
// client, mocked or real. The fake keeps summaries, the runs on them and the image marks in memory.
import type { Batch } from '../../lib/domain/batch';
import type { Image } from '../../lib/domain/image';
import type { JobQueue } from '../../lib/jobs/queue';
import type { ClientLimits } from '../../lib/quota/limits';
import { redetectSweepOf } from '../../lib/reconcile/redetect-runs';
import { redetectMessageIn } from '../../lib/redetect/message';
import type { RedetectRunStore } from '../../lib/redetect/pages';
import type { RedetectCandidate } from '../../lib/store/redetect/images';
import type { RunState } from '../../lib/store/redetect/run-state';

const NOW = 1_700_000_000_000;
const GRACE = 60_000;
const LIMITS: ClientLimits = { ratePerSecond: 10, maxImagesPerDay: 1_000, maxBatchesPerDay: 100 };

/** A batch running `run` with `left` images owed, its start's pages all done and its last look `looked` (rd_seen). */
function running(batchId: string, run: string, left: number, looked?: { at: number; seen: number; resumes: number }): [Batch, RunState] {
  const batch = { clientId: 'acme', batchId, redetecting: { run, left } } as Batch;
  const state: RunState = {
    run,
    left,
    all: false,
    day: '2023-11-14',
    movedAt: NOW - 10 * GRACE,
    calls: left,
    images: left,
    resumes: looked?.resumes ?? 0,
    ...(looked ? { resumedAt: looked.at, seen: looked.seen } : {}),
  };
  return [batch, state];
}

class FakeRunStore implements RedetectRunStore {
  readonly batches = new Map<string, Batch>();
  readonly states = new Map<string, RunState>();
  readonly marks = new Map<string, RedetectCandidate[]>();
  readonly settled: string[] = [];
  readonly givenUp: string[] = [];
  readonly reads: string[] = [];

  add([batch, state]: [Batch, RunState], marks: RedetectCandidate[] = []) {
    this.batches.set(batch.batchId, batch);
    this.states.set(batch.batchId, state);
    this.marks.set(batch.batchId, marks);
    return this;
  }

  async getBatch(_clientId: string, batchId: string) {
    return this.batches.get(batchId);
  }
  readonly runs: RedetectRunStore['runs'] = {
    take: async () => undefined,
    state: async (_c, batchId) => {
      this.reads.push(batchId);
      return this.states.get(batchId);
    },
    charge: async () => 'charged',
    giveBack: async () => undefined,
    move: async () => undefined,
    stopPaging: async () => undefined,
    release: async () => undefined,
    takeResume: async (_c, batchId, state, resumes) => {
      const now = { ...state, resumedAt: NOW, seen: state.left, resumes };
      this.states.set(batchId, now);
      return now;
    },
  };
  async *candidates(_clientId: string, batchId: string) {
    yield this.marks.get(batchId) ?? [];
  }
  async page() {
    return { candidates: [], more: false };
  }
  async mark() {
    return [];
  }
  async owedImages(_clientId: string, batchId: string, run: string) {
    return (this.marks.get(batchId) ?? []).filter((c) => c.run === run).map((c) => c.fprint);
  }
  async getImage(clientId: string, batchId: string, fprint: string) {
    const mark = this.marks.get(batchId)?.find((c) => c.fprint === fprint);
    return mark ? ({ clientId, batchId, fprint, status: 'success', redetectRun: mark.run } as Image) : undefined;
  }
  async answer(image: Image, run: string) {
    this.givenUp.push(`${image.batchId}/${image.fprint}@${run}`);
    return 'answered' as const;
  }
  async settle(_clientId: string, batchId: string, run: string) {
    this.settled.push(`${batchId}@${run}`);
    return this.batches.get(batchId);
  }
}

function sweepOf(store: FakeRunStore) {
  const sent: string[] = [];
  const queue: JobQueue = { send: async (body) => void sent.push(body) };
  const sweep = redetectSweepOf({
    redetections: store,
    batches: async function* () {
      for (const batch of store.batches.values()) yield { clientId: batch.clientId, batchId: batch.batchId };
    },
    queue,
    limitsOf: async () => LIMITS,
    graceMs: GRACE,
  });
  return { sent: () => sent.map((body) => redetectMessageIn(body)?.fprint), sweep };
}

/** An owed image's mark: queued `queuedAgo` ms before now, held by a delivery until `claimedFor` ms after now. */
const owed = (fprint: string, run: string, queuedAgo: number, claimedFor?: number): RedetectCandidate => ({
  fprint,
  facts: {},
  duplicates: 0,
  run,
  queuedAt: NOW - queuedAgo,
  ...(claimedFor !== undefined ? { claimedUntil: NOW + claimedFor } : {}),
});

beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW));
afterEach(() => jest.restoreAllMocks());

describe('the sweep of re-detection runs, against a fake store', () => {
  it('ends a run that owes nothing, and leaves a batch being erased or running none unread', async () => {
    const store = new FakeRunStore().add(running('done', 'r1', 0)).add(running('erasing', 'r2', 3));
    store.batches.set('erasing', { ...store.batches.get('erasing')!, deleting: true });
    store.batches.set('plain', { clientId: 'acme', batchId: 'plain' } as Batch);
    const { sweep } = sweepOf(store);

    const result = await sweep({ maxBatches: 10, maxDurationMs: 5_000 });

    expect(store.settled).toEqual(['done@r1']);
    expect(store.reads).toEqual(['done']);
    expect(result).toMatchObject({ runs: 1, started: 0, requeued: 0, forgone: 0, truncated: false });
  });

  it('first records its look; a whole grace later with no answer, queues again only the images nobody holds', async () => {
    const marks = [owed('idle', 'r1', 2 * GRACE), owed('held', 'r1', 2 * GRACE, 30_000), owed('fresh', 'r1', 1_000)];
    const store = new FakeRunStore().add(running('b1', 'r1', 3), marks);
    const { sweep, sent } = sweepOf(store);

    expect((await sweep({ maxBatches: 10, maxDurationMs: 5_000 })).requeued).toBe(0);
    expect(store.states.get('b1')).toMatchObject({ seen: 3, resumes: 0 });

    store.states.set('b1', { ...store.states.get('b1')!, resumedAt: NOW - 2 * GRACE });
    const later = await sweep({ maxBatches: 10, maxDurationMs: 5_000 });

    expect(later.requeued).toBe(1);
    expect(sent()).toEqual(['idle']);
    expect(store.states.get('b1')?.resumes).toBe(1);
  });

  it('gives up the idle images after three resumes no answer followed, and ends nothing it still owes', async () => {
    const store = new FakeRunStore().add(running('b1', 'r1', 2, { at: NOW - 2 * GRACE, seen: 2, resumes: 3 }), [
      owed('a', 'r1', 2 * GRACE),
      owed('b', 'r1', 2 * GRACE),
      owed('other-run', 'r0', 2 * GRACE),
    ]);
    const { sweep, sent } = sweepOf(store);

    const result = await sweep({ maxBatches: 10, maxDurationMs: 5_000 });

    expect(result).toMatchObject({ requeued: 0, forgone: 2 });
    expect(store.givenUp).toEqual(['b1/a@r1', 'b1/b@r1']);
    expect(sent()).toEqual([]);
  });

  it('looks at no more batches than it is allowed, and says it stopped short', async () => {
    const store = new FakeRunStore()
      .add(running('b1', 'r1', 0))
      .add(running('b2', 'r2', 0))
      .add(running('b3', 'r3', 0));
    const { sweep } = sweepOf(store);

    const result = await sweep({ maxBatches: 2, maxDurationMs: 5_000 });

    expect(store.settled).toEqual(['b1@r1', 'b2@r2']);
    expect(result).toMatchObject({ runs: 2, truncated: true });
  });
});
