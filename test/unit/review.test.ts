// The pure parts of review (docs/design.md §10): agreement and the suggested threshold, the review queue's key ranges
// and merge, and the write requests a verdict and a re-threshold send.
import { agreementAt, agreementOf, justAbove, type ReviewedImage, suggestThreshold } from '../../lib/review/agreement';
import { countRecords } from '../../lib/store/batch/counters';
import { finishCounts } from '../../lib/store/image/record';
import { mergeByDistance, reviewedRequest, reviewQueueSideRequest } from '../../lib/store/review/queue';
import { catFlagRequest, machineVerdictRequest, reviewCounts, reviewRequest } from '../../lib/store/review/verdicts';
import { confidenceOfReviewKey, reviewKey, toStoredReview } from '../../lib/store/table/schema';

const img = (catConfidence: number, isCat: boolean, machineIsCat: boolean): ReviewedImage => ({ catConfidence, isCat, machineIsCat });

describe('agreement', () => {
  it('counts agreement, precision and recall of the machine against the people (hand-computed)', () => {
    // machine cat / person cat: 2 (95, 90); machine cat / person not: 1 (85); machine not / person cat: 1 (50); both not: 2.
    const images = [
      img(95, true, true),
      img(90, true, true),
      img(85, false, true),
      img(50, true, false),
      img(20, false, false),
      img(0, false, false),
    ];

    // Thresholds: 0.01 → all but the 0 are cats, wrong on 85 and 20: 4. Just above 20 (20.01) → wrong on 85 only: 5.
    // 50.01 → wrong on 85 and 50: 4. 85.01 → wrong on 50: 5. 90.01 → 4. 95.01 → 3. Best 5; lowest of equals 20.01.
    expect(agreementOf(images)).toEqual({ reviewed: 6, agree: 4, precision: 0.6667, recall: 0.6667, suggestedCatMinConfidence: 20.01 });
  });

  it('suggests the lowest threshold with the most agreement: just above a not-cat, not at the next cat', () => {
    // 20.01 → 95, 90, 85, 50 cats: wrong on 85 only: 4 of 5. 85.01 → wrong on 50: 4. 20 → wrong on 85 and 20: 3.
    // The stretch (20, 50] agrees 4 all along (the old rule picked its top, 50); its lowest point on the grid is 20.01.
    const images = [img(95, true, true), img(90, true, true), img(85, false, true), img(50, true, false), img(20, false, false)];

    expect([agreementAt(images, 20.01), agreementAt(images, 50), agreementAt(images, 85.01), agreementAt(images, 95)]).toEqual([
      4, 4, 4, 3,
    ]);
    expect(agreementAt(images, 20)).toBe(3);
    expect(suggestThreshold(images)).toBe(20.01);
  });

  it('suggests in hundredths of a percent, strictly above the not-cat it must leave out', () => {
    expect(justAbove(87.6543)).toBe(87.66);
    expect(justAbove(87.65)).toBe(87.66);
    expect(justAbove(87.656)).toBe(87.66);
    expect(justAbove(99.995)).toBe(100);
    expect(justAbove(100)).toBeUndefined();
    expect(suggestThreshold([img(87.6543, false, true), img(95, true, true)])).toBe(87.66);
  });

  it('suggests the lowest step when nothing reviewed argues for more, and never 0', () => {
    // A cup at 0 % called not a cat: every threshold agrees; the lowest wins (was 100 before, the defect).
    expect(suggestThreshold([img(0, false, false)])).toBe(0.01);
    expect(suggestThreshold([img(90, false, true), img(0, false, false)])).toBe(90.01);
    expect(suggestThreshold([img(0, true, false), img(60, true, false)])).toBe(0.01);
    // A not-cat at 100 %: no threshold leaves it out; the lowest of the equals (0.01 and up) is suggested.
    expect(suggestThreshold([img(100, false, true)])).toBe(0.01);
  });

  it('answers nulls where a figure has no denominator', () => {
    expect(agreementOf([])).toEqual({ reviewed: 0, agree: 0, precision: null, recall: null, suggestedCatMinConfidence: null });
    expect(agreementOf([img(10, false, false)])).toMatchObject({ precision: null, recall: null, agree: 1 });
  });
});

describe('the review queue', () => {
  it('keys images by state and confidence in millionths, floored, so a key never reads above the stored confidence', () => {
    expect(reviewKey(false, 87.6543219)).toBe('P#087654321');
    expect(reviewKey(true, 100)).toBe('R#100000000');
    expect(reviewKey(false, 0)).toBe('P#000000000');
    expect(confidenceOfReviewKey(reviewKey(false, 87.6543219))).toBeLessThanOrEqual(87.6543219);
  });

  it('walks up from the threshold ascending and down from below it descending, on the pending range only', () => {
    const up = reviewQueueSideRequest('T', 'acme', 'b', 80, 'up', 11)!;
    const down = reviewQueueSideRequest('T', 'acme', 'b', 80, 'down', 11)!;

    expect(up).toMatchObject({ IndexName: 'batch-review', ScanIndexForward: true, Limit: 11 });
    expect(up.ExpressionAttributeValues).toEqual({ ':partition': 'acme#b', ':lo': 'P#080000000', ':hi': 'P#999999999' });
    expect(down).toMatchObject({ ScanIndexForward: false });
    expect(down.ExpressionAttributeValues).toEqual({ ':partition': 'acme#b', ':lo': 'P#000000000', ':hi': 'P#079999999' });
    expect(reviewQueueSideRequest('T', 'acme', 'b', 0, 'down', 11)).toBeUndefined();
  });

  it('merges the two sides nearest the threshold first, a tie going to the side at or above it', () => {
    const key = (fprint: string, conf: number) => ({ batch_id: 'p', img_fprint: fprint, review_key: reviewKey(false, conf) });
    const up = [key('a', 82), key('b', 85), key('c', 99)];
    const down = [key('d', 78), key('e', 70), key('f', 10)];

    expect(mergeByDistance(80, up, down, 5).map((m) => `${m.key.img_fprint}:${m.side}`)).toEqual([
      'a:up',
      'd:down',
      'b:up',
      'e:down',
      'c:up',
    ]);
  });

  it('reads the reviewed range for agreement', () => {
    expect(reviewedRequest('T', 'acme', 'b')).toMatchObject({
      IndexName: 'batch-review',
      ExpressionAttributeValues: { ':reviewed': 'R#' },
    });
  });
});

describe('the writes of a verdict', () => {
  const image = { clientId: 'acme', batchId: 'b', fprint: 'f', uploadedAt: 5, isCat: true, catConfidence: 90 };
  const review = { isCat: false, note: 'a statue', reviewedAt: 7, machineIsCat: true };

  it('sets the verdict, the image flag and the cat key, moves the queue key to reviewed, only if the image is as read', () => {
    const req = reviewRequest('T', image, review);

    expect(req.UpdateExpression).toBe('SET #isCat = :cat, #reviewKey = :reviewKey, #review = :review REMOVE #catAt');
    expect(req.ConditionExpression).toBe(
      '#status = :success AND #isCat = :was AND attribute_not_exists(#audit) AND attribute_not_exists(#review)',
    );
    expect(req.ExpressionAttributeValues).toMatchObject({
      ':cat': false,
      ':was': true,
      ':reviewKey': 'R#090000000',
      ':review': toStoredReview(review),
    });
  });

  it('withdraws a verdict back to the machine’s, guarded by the verdict read (its time)', () => {
    const req = reviewRequest('T', { ...image, isCat: false, review }, undefined);

    expect(req.UpdateExpression).toBe('SET #isCat = :cat, #reviewKey = :reviewKey, #catAt = :uploadedAt REMOVE #review');
    expect(req.ConditionExpression).toBe('#status = :success AND #isCat = :was AND attribute_not_exists(#audit) AND #review.#ts = :ts');
    expect(req.ExpressionAttributeValues).toMatchObject({ ':cat': true, ':was': false, ':reviewKey': 'P#090000000', ':ts': 7 });
  });

  it('moves cats, reviewed and corrected by what changed', () => {
    expect(reviewCounts({ isCat: true }, review)).toEqual({ cats: -1, reviewed: 1, corrected: 1 });
    expect(reviewCounts({ isCat: false, review }, undefined)).toEqual({ cats: 1, reviewed: -1, corrected: -1 });
    expect(reviewCounts({ isCat: false, review }, { ...review, isCat: true })).toEqual({ cats: 1, reviewed: 0, corrected: -1 });
  });

  it('never flips a reviewed image’s flag on a re-threshold: only its machine verdict moves', () => {
    expect(catFlagRequest('T', image, false).ConditionExpression).toContain('attribute_not_exists(#review)');
    const machine = machineVerdictRequest('T', image, review, false);
    expect(machine.UpdateExpression).toBe('SET #review.#mc = :mc');
    expect(machine.ConditionExpression).toBe('#status = :success AND #review.#ts = :ts AND #review.#mc = :was');
  });

  it('counts a carried verdict with the result it comes with, and recounts verdicts from the records', () => {
    const carried = {
      status: 'success' as const,
      isCat: true,
      catConfidence: 90,
      cats: [],
      labels: [],
      reusedFrom: 1,
      review: { isCat: false, reviewedAt: 3 },
    };

    expect(finishCounts(carried)).toEqual({ pending: -1, success: 1, reused: 1, reviewed: 1, corrected: 1 });
    expect(
      countRecords([
        { op_status: 'success', rek_iscat: false, review: { cat: false, ts: 1, mc: true } },
        { op_status: 'success', rek_iscat: true, review: { cat: true, ts: 1, mc: true } },
        { op_status: 'success', rek_iscat: true },
      ]),
    ).toMatchObject({ success: 3, cats: 2, reviewed: 2, corrected: 1 });
  });
});
