// A re-detection's pure parts (docs/api.md "Re-detect"): which records it chooses, what it prices, what an image's new
// answer moves on the counters and writes, how a change is shown, its message, and the status a run reads as.
import { reportedStatus, ZERO_COUNTS, type Image } from '../../lib/domain';
import { presentChange } from '../../lib/api/changes';
import { encodeRedetectMessage, redetectMessageIn } from '../../lib/redetect/message';
import { answeredByCurrentModel } from '../../lib/redetect/model';
import { planOf } from '../../lib/redetect/plan';
import { answerCounts, answerRequest, countImagesRequest, forgoRequest, storedModelOf } from '../../lib/store/redetect-writes';

const image = (over: Partial<Image> = {}): Image => ({
  clientId: 'c',
  batchId: 'b',
  fprint: 'f1',
  status: 'success',
  expiresAt: 2_000_000_000,
  uploadedAt: 1000,
  isCat: false,
  catConfidence: 12,
  detection: { model: 'old', labels: [] },
  ...over,
});

const answer = (isCat: boolean) => ({
  isCat,
  catConfidence: isCat ? 91 : 0,
  cats: [],
  labels: [],
  trimmed: { model: 'new', labels: [] },
  detections: { model: 'new', boxes: [] },
});

describe('the records a re-detection chooses', () => {
  it('are those whose stored model is not the one answering now', () => {
    expect(answeredByCurrentModel({ model: 'new' }, 'new')).toBe(true);
    expect(answeredByCurrentModel({ model: 'old' }, 'new')).toBe(false);
  });

  it("read a reused copy by its boxes' model, and a record with neither as unknown (never as the current one)", () => {
    expect(storedModelOf(image())).toBe('old');
    expect(storedModelOf({ detections: { model: 'boxes', boxes: [] } })).toBe('boxes');
    expect(storedModelOf({})).toBe('unknown');
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
    expect(request.ExpressionAttributeValues?.[':previous']).toEqual({ model: 'old', cat: false, conf: 12 });
    expect(request.UpdateExpression).toMatch(/REMOVE #redetectRun, #reused, #catAt$/);
  });
});

describe('an image the detector refuses during a run', () => {
  it('keeps its answer: only the mark goes, and only while the run still owes it one', () => {
    const request = forgoRequest('T', image(), 'run1');
    expect([request.UpdateExpression, request.ConditionExpression, request.ExpressionAttributeValues]).toEqual([
      'REMOVE #redetectRun',
      '#redetectRun = :run',
      { ':run': 'run1' },
    ]);
  });
});

describe('the quota of re-detections', () => {
  it('counts them all at once only while they fit under the limit', () => {
    const request = countImagesRequest('T', 'c', '2026-11-27', 5, 100, 0);
    expect(request.ExpressionAttributeValues).toMatchObject({ ':n': 5, ':limit': 100, ':room': 95 });
  });
});

describe('a change', () => {
  it('is shown from the previous machine verdict to the current one, and not at all when it stayed', () => {
    const flipped = image({ isCat: true, catConfidence: 91, previous: { model: 'old', isCat: false, catConfidence: 12 } });
    expect(presentChange(flipped)).toMatchObject({ change: 'not cat → cat', current: { isCat: true, catConfidence: 91 } });
    const reviewed = image({
      isCat: true,
      review: { isCat: true, reviewedAt: 1, machineIsCat: false },
      previous: { model: 'old', isCat: true, catConfidence: 90 },
    });
    expect(presentChange(reviewed)).toMatchObject({ change: 'cat → not cat', current: { isCat: false } });
    expect(presentChange(image({ previous: { model: 'old', isCat: false, catConfidence: 3 } }))).toBeUndefined();
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
