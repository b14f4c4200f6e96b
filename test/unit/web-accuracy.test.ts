// The audit queue in the web app (DESIGN §13), without a browser: how the estimates and their 95 % intervals are
// worded, the draw's size as typed, and the queue's listing for each source (a switch keeps the verdicts given).
import { countText, drawSize, NOT_ENOUGH, shareText } from '../../web/accuracy';
import type { Image } from '../../web/api';
import { emptyQueue, judge, listingQuery, switched, undo, withPage } from '../../web/review';

const image = (fprint: string): Image => ({ fprint, status: 'success', isCat: true, machineIsCat: true }) as Image;

describe('the estimates in words', () => {
  it('a share with its interval in whole percentages, the bounds rounded outwards', () => {
    expect(shareText({ estimate: 0.9213, low: 0.8549, high: 0.9581 })).toBe('92% (85–96%)');
    expect(shareText({ estimate: 1, low: 0.9312, high: 1 })).toBe('100% (93–100%)');
    expect(shareText({ estimate: 0, low: 0, high: 0.0401 })).toBe('0% (0–5%)');
  });

  it('a count with its interval in whole images', () => {
    expect(countText({ estimate: 140.4, low: 120.2, high: 159.7 })).toBe('≈ 140 (120–160)');
    expect(countText({ estimate: 0, low: 0, high: 2.3 })).toBe('≈ 0 (0–3)');
  });

  it('the interval always holds the estimate shown, even when rounding would leave it out', () => {
    expect(shareText({ estimate: 0.996, low: 0.99, high: 0.999 })).toBe('100% (99–100%)');
    expect(countText({ estimate: 9.6, low: 9.1, high: 9.55 })).toBe('≈ 10 (9–10)');
  });

  it('an interval of no width (every image it rests on reviewed): exact, without a range', () => {
    expect(shareText({ estimate: 1, low: 1, high: 1 })).toBe('100% (exact)');
    expect(countText({ estimate: 12, low: 12, high: 12 })).toBe('12 (exact)');
  });

  it('no estimate: "not enough reviews yet"', () => {
    expect([shareText(null), countText(null)]).toEqual([NOT_ENOUGH, NOT_ENOUGH]);
    expect(NOT_ENOUGH).toBe('not enough reviews yet');
  });
});

describe('the draw size as typed', () => {
  it.each(['1', '50', ' 500 '])('%j is a size', (text) => {
    expect(drawSize(text)).toEqual({ size: Number(text.trim()) });
  });

  it.each(['', '0', '501', '2.5', '-3', 'fifty', '1e2'])('%j is refused with the range', (text) => {
    expect(drawSize(text)).toEqual({ error: 'Enter a whole number of images, 1 to 500.' });
  });
});

describe('the queue and its listing', () => {
  it('uncertain first reads the unreviewed by confidence, audit the sample pending', () => {
    expect(listingQuery('uncertain')).toEqual({ review: 'pending', order: 'uncertain' });
    expect(listingQuery('audit')).toEqual({ audit: 'pending' });
  });

  it('another listing chosen: the queue empties and reads from its start, the verdicts given stay for undo', () => {
    const read = withPage(emptyQueue(), [image('a'), image('b'), image('c')], 'next');
    const judged = judge(read, false);
    const now = switched(judged);
    expect(now).toEqual({ queue: [], given: [{ image: image('a'), isCat: false }], skipped: [], ended: false });
    expect(now.cursor).toBeUndefined();
    expect(undo(now).queue.queue.map((i) => i.fprint)).toEqual(['a']);
  });
});
