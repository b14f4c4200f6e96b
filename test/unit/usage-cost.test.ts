import { type Batch } from '../../lib/domain/batch';
import { ZERO_COUNTS } from '../../lib/domain/counts';
import { batchUsage, uploadEstimate } from '../../lib/domain/pricing';
import { summarizeBatch } from '../../lib/domain/summary';

describe('batchUsage', () => {
  it('counts a call per classified image that was not reused, and prices it', () => {
    const usage = batchUsage({ success: 7, reused: 2, duplicate: 3 }, 0.001);

    expect(usage).toEqual({ detectLabelsCalls: 5, reused: 2, duplicates: 3, estimatedCostUsd: 0.005, savedUsd: 0.005 });
  });

  it('prices without float noise', () => {
    expect(batchUsage({ success: 3, reused: 0, duplicate: 0 }, 0.1).estimatedCostUsd).toBe(0.3);
  });

  it('costs nothing for a batch that only reused and repeated', () => {
    expect(batchUsage({ success: 4, reused: 4, duplicate: 6 }, 0.0012)).toEqual({
      detectLabelsCalls: 0,
      reused: 4,
      duplicates: 6,
      estimatedCostUsd: 0,
      savedUsd: 0.012,
    });
  });
});

describe('uploadEstimate', () => {
  it('asks a call for each distinct fingerprint not known', () => {
    expect(uploadEstimate(10, 8, 3, 0.001)).toEqual({ images: 10, distinct: 8, known: 3, newCalls: 5, estimatedCostUsd: 0.005 });
  });
});

describe('the summary', () => {
  it('carries its usage at the given price', () => {
    const batch: Batch = {
      clientId: 'c',
      batchId: 'b',
      createdAt: 0,
      debug: false,
      retentionDays: 1,
      expiresAt: 86400,
      closed: false,
      counts: { ...ZERO_COUNTS, total: 5, success: 3, reused: 1, duplicate: 2 },
    };

    expect(summarizeBatch(batch, { pricePerImageUsd: 0.002 }).usage).toEqual({
      detectLabelsCalls: 2,
      reused: 1,
      duplicates: 2,
      estimatedCostUsd: 0.004,
      savedUsd: 0.006,
    });
  });
});
