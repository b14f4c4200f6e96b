// A re-detection's pure parts (docs/api.md "Re-detect"): which records it chooses, what it prices, what an image's new
// answer moves on the counters and writes, how a change is shown, its message, and the status a run reads as.

import type { RekognitionClient } from '@aws-sdk/client-rekognition';
import { presentChange } from '../../lib/api/changes';
import { type Batch, reportedStatus } from '../../lib/domain/batch';
import { ZERO_COUNTS } from '../../lib/domain/counts';
import { type Image } from '../../lib/domain/image';
import { encodeRedetectMessage, redetectMessageIn } from '../../lib/redetect/message';
import { currentModel } from '../../lib/redetect/model';
import type { RedetectRunStore } from '../../lib/redetect/pages';
import { planOf, type RedetectPlanDeps, redetectBatch } from '../../lib/redetect/plan';
import { answerCounts, answerRequest, forgoRequest } from '../../lib/store/redetect/answers';
import { markImageRequest, type RedetectCandidate } from '../../lib/store/redetect/images';

import { chargedAlready, chargePageRequest } from '../../lib/store/redetect/run';

const OLD = { name: 'rekognition-detect-labels', version: '2.0' };
const NEW = { name: 'rekognition-detect-labels', version: '3.0' };

const image = (over: Partial<Image> = {}): Image => ({
  clientId: 'c',
  batchId: 'b',
  fprint: 'f1',
  status: 'success',
  expiresAt: 2_000_000_000,
  uploadedAt: 1000,
  isCat: false,
  catConfidence: 12,
  detection: { model: '2.0', labels: [] },
  model: OLD,
  ...over,
});

const answer = (isCat: boolean) => ({
  isCat,
  catConfidence: isCat ? 91 : 0,
  cats: [],
  labels: [],
  trimmed: { model: '3.0', labels: [] },
  detections: { model: '3.0', boxes: [] },
  model: NEW,
});

/** The plan over one page of candidates, with the model answering now given. */
async function chosen(candidates: RedetectCandidate[], current: typeof NEW): Promise<number> {
  // The dry run reads the batch and its pages of candidates, and nothing else of the store.
  const redetections: Pick<RedetectRunStore, 'getBatch' | 'candidates'> = {
    getBatch: async () => ({ clientId: 'c', batchId: 'b', doneAt: 1 }) as Batch,
    candidates: async function* () {
      yield candidates;
    },
  };
  const deps = {
    redetections,
    currentModel: async () => current,
    isLive: () => true,
    pricePerImageUsd: 0.001,
  } as unknown as RedetectPlanDeps;
  const out = await redetectBatch(deps, 'c', 'b', { dryRun: true });
  return out.outcome === 'planned' ? out.plan.newCalls : -1;
}

describe('the records a re-detection chooses', () => {
  it('are those the model answering now did not answer, by the one comparison of lib/model-version.ts', async () => {
    const candidate = (facts: RedetectCandidate['facts']): RedetectCandidate => ({ fprint: 'f', facts, duplicates: 0 });
    // Its kept model; else its boxes' model string; a legacy local string dated by its classification; else unknown.
    expect(await chosen([candidate({ model: NEW }), candidate({ model: OLD })], NEW)).toBe(1);
    expect(await chosen([candidate({ detections: { model: '3.0' } })], NEW)).toBe(0);
    expect(await chosen([candidate({ detections: { model: '2.0' } })], NEW)).toBe(1);
    expect(await chosen([candidate({})], NEW)).toBe(1);
  });

  it('learn the model answering now as {name, version} from one probe, and record it as the current model', async () => {
    let calls = 0;
    const rekognition = { send: async () => ({ LabelModelVersion: `3.${calls++}` }) } as unknown as RekognitionClient;
    const recorded: unknown[] = [];
    const record = async (m: unknown) => void recorded.push(m);
    expect(await currentModel(rekognition, record, 0)).toEqual(NEW);
    expect(await currentModel(rekognition, record, 1)).toEqual(NEW);
    expect(recorded).toEqual([NEW]);
    expect(await currentModel(rekognition, record, 10 * 60_000)).toEqual({ name: NEW.name, version: '3.1' });
    expect(recorded).toHaveLength(2);
  });
});

describe('the price of a re-detection', () => {
  it('is one DetectLabels call per distinct image; its duplicates count as images, at no call', () => {
    expect(planOf([{ duplicates: 2 }, { duplicates: 0 }], 0.001)).toEqual({ images: 4, newCalls: 2, estimatedCostUsd: 0.002 });
    expect(planOf([], 0.001)).toEqual({ images: 0, newCalls: 0, estimatedCostUsd: 0 });
  });
});

describe("an image's new answer", () => {
  it('moves cats when an unreviewed verdict flips, and nothing when it stays', () => {
    expect(answerCounts(image(), answer(true))).toEqual({ cats: 1 });
    expect(answerCounts(image({ isCat: true }), answer(false))).toEqual({ cats: -1 });
    expect(answerCounts(image(), answer(false))).toEqual({});
  });

  it("keeps a person's verdict: only corrected moves, and the record's isCat stays the person's", () => {
    const reviewed = image({ isCat: true, review: { isCat: true, reviewedAt: 5, machineIsCat: false } });
    expect(answerCounts(reviewed, answer(true))).toEqual({ corrected: -1 });
    const request = answerRequest('T', reviewed, 'run1', answer(true), 9);
    expect(request.ExpressionAttributeValues).toMatchObject({ ':cat': true, ':mc': true, ':run': 'run1' });
    expect(request.UpdateExpression).toContain('#review.#mc = :mc');
    expect(request.ConditionExpression).toBe('#redetectRun = :run');
  });

  it('makes a reused copy its own answer, and keeps the answer it replaces', () => {
    expect(answerCounts(image({ reused: true }), answer(false))).toEqual({ reused: -1 });
    const request = answerRequest('T', image({ reused: true }), 'run1', answer(false), 9);
    expect(request.ExpressionAttributeValues?.[':previous']).toEqual({ model: OLD, cat: false, conf: 12 });
    expect(request.ExpressionAttributeValues?.[':model']).toEqual(NEW);
    // A record written before records kept their model: the replaced answer's model read from its boxes' string.
    const legacy = answerRequest('T', image({ model: undefined }), 'run1', answer(false), 9);
    expect(legacy.ExpressionAttributeValues?.[':previous']).toMatchObject({ model: OLD });
    expect(request.UpdateExpression).toMatch(/REMOVE #redetectRun, #rdAt, #rdClaim, #reused, #catAt$/);
    expect(request.UpdateExpression).toContain('#rdLast = :run');
  });
});

describe('an image the detector refuses during a run', () => {
  it('keeps its answer: only the mark goes, and only while the run still owes it one', () => {
    const request = forgoRequest('T', image(), 'run1');
    expect([request.UpdateExpression, request.ConditionExpression, request.ExpressionAttributeValues]).toEqual([
      'SET #rdLast = :run REMOVE #redetectRun, #rdAt, #rdClaim',
      '#redetectRun = :run',
      { ':run': 'run1' },
    ]);
  });
});

describe('the quota of re-detections', () => {
  it('charges a page only while it fits under the limit, and never a page of the run charged before', () => {
    const request = chargePageRequest('T', 'c', '2026-11-27', { run: 'r1', last: 'f0500', n: 5 }, 100, 0);
    expect(request.ExpressionAttributeValues).toMatchObject({ ':n': 5, ':limit': 100, ':room': 95, ':last': 'f0500' });
    expect(request.ExpressionAttributeNames?.['#token']).toBe('rd_r1');
    expect(request.ConditionExpression).toContain('(attribute_not_exists(#token) OR #token < :last)');
    // Pages go in fingerprint order: the token at or past a page's end says the page was charged.
    expect(chargedAlready({ rd_r1: 'f0500' }, 'r1', 'f0500')).toBe(true);
    expect(chargedAlready({ rd_r1: 'f1000' }, 'r1', 'f0500')).toBe(true);
    expect(chargedAlready({ rd_r1: 'f0500' }, 'r1', 'f1000')).toBe(false);
    expect(chargedAlready({ rd_r0: 'f1000' }, 'r1', 'f0500')).toBe(false);
  });

  it('marks an image only once per run: never again one the run answered', () => {
    const request = markImageRequest('T', 'c', 'b', 'f1', 'r1', 7);
    expect(request.ConditionExpression).toBe('#status = :success AND (attribute_not_exists(#rdLast) OR #rdLast <> :run)');
    expect(request.ExpressionAttributeValues).toMatchObject({ ':run': 'r1', ':now': 7 });
  });
});

describe('a change', () => {
  it('is shown from the previous machine verdict to the current one, and not at all when it stayed', () => {
    const flipped = image({ isCat: true, catConfidence: 91, previous: { model: OLD, isCat: false, catConfidence: 12 } });
    expect(presentChange(flipped)).toMatchObject({
      change: 'not cat → cat',
      previous: { model: OLD },
      current: { model: OLD, isCat: true, catConfidence: 91 },
    });
    const reviewed = image({
      isCat: true,
      review: { isCat: true, reviewedAt: 1, machineIsCat: false },
      previous: { model: OLD, isCat: true, catConfidence: 90 },
    });
    expect(presentChange(reviewed)).toMatchObject({ change: 'cat → not cat', current: { isCat: false } });
    expect(presentChange(image({ previous: { model: OLD, isCat: false, catConfidence: 3 } }))).toBeUndefined();
  });
});

describe("a re-detection's message and status", () => {
  it('is told apart from an S3 notification, and a malformed one is refused', () => {
    const body = encodeRedetectMessage({ clientId: 'c', batchId: 'b', fprint: 'f', run: 'r' });
    expect(redetectMessageIn(body)).toEqual({ type: 'redetect', clientId: 'c', batchId: 'b', fprint: 'f', run: 'r' });
    expect(redetectMessageIn(JSON.stringify({ Records: [] }))).toBeUndefined();
    expect(() => redetectMessageIn(JSON.stringify({ type: 'redetect', clientId: 'c' }))).toThrow();
  });

  it('makes a done batch read processing until the run ends', () => {
    const done = { closed: true, counts: { ...ZERO_COUNTS, total: 1, success: 1 }, doneAt: 5 };
    expect(reportedStatus(done)).toBe('done');
    expect(reportedStatus({ ...done, redetecting: { run: 'r', left: 1 } })).toBe('processing');
  });
});
