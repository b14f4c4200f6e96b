// Counters no sequence of whole counter moves can leave, and when the sweep's count check recounts a batch.

import { type Batch } from '../../lib/domain/batch';
import { type Counts, countsCannotBeRight, ZERO_COUNTS } from '../../lib/domain/counts';
import { recountReason } from '../../lib/reconcile/batch-counts';

const counts = (c: Partial<Counts>): Counts => ({ ...ZERO_COUNTS, ...c });
const batch = (b: Partial<Batch>): Batch => ({
  clientId: 'c',
  batchId: 'b',
  createdAt: 0,
  debug: false,
  retentionDays: 1,
  expiresAt: 2e9,
  closed: true,
  counts: counts({ total: 2, pending: 1, success: 1 }),
  ...b,
});

describe('countsCannotBeRight', () => {
  it.each([
    ['the issue: total 99, pending -1, success 100', { total: 99, pending: -1, success: 100 }],
    ['more finished than counted', { total: 2, success: 2, fail: 1 }],
    ['a negative counter', { total: 0, duplicate: 1, fail: -1 }],
    ['total above its parts', { total: 3, pending: 1, success: 1 }],
    ['more reused than classified', { total: 1, success: 1, reused: 2 }],
    ['more cats than classified', { total: 1, success: 1, cats: 2 }],
    ['more reviewed than classified', { total: 1, success: 1, reviewed: 2 }],
    ['more corrected than reviewed', { total: 1, success: 1, reviewed: 0, corrected: 1 }],
  ])('is true for %s', (_, c) => {
    expect(countsCannotBeRight(counts(c))).toBe(true);
  });

  it.each([
    ['nothing yet', {}],
    ['work under way', { total: 5, pending: 2, success: 1, fail: 1, duplicate: 1, cats: 1, reused: 1, reviewed: 1, corrected: 1 }],
    ['counted twice but whole (pending 1 for good: only a recount of a quiet batch tells)', { total: 3, pending: 1, success: 2 }],
  ])('is false for %s', (_, c) => {
    expect(countsCannotBeRight(counts(c))).toBe(false);
  });
});

describe('recountReason', () => {
  it('recounts counters that cannot be right, open or closed', () => {
    expect(recountReason(batch({ closed: false, counts: counts({ total: 1, pending: -1, success: 2 }) }), undefined)).toBe('impossible');
  });

  it('settles a closed batch with nothing pending that is not stamped done', () => {
    expect(recountReason(batch({ counts: counts({ total: 2, success: 2 }) }), undefined)).toBe('due');
  });

  it('recounts a closed batch only when its counters held still since the last run', () => {
    const b = batch({});
    expect(recountReason(b, undefined)).toBeUndefined();
    expect(recountReason(b, JSON.stringify(counts({ total: 2, pending: 2 })))).toBeUndefined();
    expect(recountReason(b, JSON.stringify(b.counts))).toBe('stuck');
  });

  it('leaves an open batch whose counters are whole alone, moving or not', () => {
    const b = batch({ closed: false });
    expect(recountReason(b, JSON.stringify(b.counts))).toBeUndefined();
  });
});
