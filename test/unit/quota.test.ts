// The quota's pure parts: the token bucket's arithmetic (a clock passed in), the per-client limiter, the UTC day, and
// the store requests that count uploads and set limits (built without any network).

import { toHttpError } from '../../lib/http/middleware';
import { batchesBeyondQuota, burstOf, formsBeyondQuota, nextUtcDay, utcDay, withDefaults } from '../../lib/quota/limits';
import { ClientRateLimiter, RateLimitedError } from '../../lib/quota/rate-limiter';
import { TokenBucket } from '../../lib/quota/token-bucket';
import { usageKey } from '../../lib/store/client/limits';
import { countUploadRequest, markQuotaExceededRequest, setClientLimitsRequest } from '../../lib/store/client/quota';

describe('TokenBucket', () => {
  it('admits a full burst at once, then refuses and says when the next token arrives', () => {
    // Arrange: 5 a second, capacity 10
    const bucket = new TokenBucket(5, 10, 0);

    // Act
    const waits = Array.from({ length: 11 }, () => bucket.take(0));

    // Assert
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(waits[10]).toBeCloseTo(0.2);
  });

  it('refills at its rate, never above its capacity', () => {
    // Arrange
    const bucket = new TokenBucket(5, 10, 0);
    for (let i = 0; i < 10; i++) bucket.take(0);

    // Act / Assert: 1 s later five tokens, not more
    expect(Array.from({ length: 6 }, () => bucket.take(1000))).toEqual([0, 0, 0, 0, 0, expect.closeTo(0.2)]);
    // a long quiet while fills it to 10 only
    expect(Array.from({ length: 11 }, () => bucket.take(1_000_000)).filter((w) => w === 0)).toHaveLength(10);
  });

  it('applies a changed rate from then on', () => {
    // Arrange
    const bucket = new TokenBucket(1, 2, 0);
    bucket.take(0);
    bucket.take(0);

    // Act
    bucket.setRate(10, 20, 0);

    // Assert
    expect(bucket.take(100)).toBe(0);
  });
});

describe('quota_exceeded', () => {
  const limits = { ratePerSecond: 50, maxImagesPerDay: 5, maxBatchesPerDay: 3 };
  const now = Date.parse('2026-11-27T23:00:00.500Z');

  it('answers forms beyond the images left 429 with Retry-After until 00:00 UTC, naming what is left and when', () => {
    expect(toHttpError(formsBeyondQuota(limits, 3, 4, now))).toEqual({
      status: 429,
      code: 'quota_exceeded',
      message:
        "4 upload forms asked, but 2 of the client's quota of 5 images per UTC day are left for 2026-11-27; the quota starts afresh at 2026-11-28T00:00:00.000Z",
      headers: { 'Retry-After': '3600' },
    });
  });

  it("answers a batch beyond the day's batches 429 naming the limit and the reset time", () => {
    expect(toHttpError(batchesBeyondQuota(limits, now)).message).toBe(
      "the client's limit of 3 batches per UTC day is used up for 2026-11-27; the quota starts afresh at 2026-11-28T00:00:00.000Z",
    );
  });
});

describe('TokenBucket, a request costing several tokens', () => {
  it('charges an admitted request its whole cost, into debt paid back at the rate before the next request', () => {
    // Arrange: 1 a second, capacity 2
    const bucket = new TokenBucket(1, 2, 0);

    // Act: admitted with one token, then charged 99 more
    const costly = bucket.take(0);
    bucket.charge(0, 99);
    const next = bucket.take(0);
    const later = bucket.take(98_000);

    // Assert: 2 - 1 - 99 = -98 tokens: 99 s until the next one
    expect(costly).toBe(0);
    expect(next).toBeCloseTo(99);
    expect(later).toBeCloseTo(1);
    expect(bucket.take(99_000)).toBe(0);
  });
});

describe('ClientRateLimiter', () => {
  it("keeps a bucket per client, so one client's burst leaves another's untouched", async () => {
    // Arrange
    const limiter = new ClientRateLimiter({
      limitsOf: async () => ({ ratePerSecond: 1, maxImagesPerDay: 10, maxBatchesPerDay: 1000 }),
      now: () => 0,
    });
    await limiter.admit('a');
    await limiter.admit('a');

    // Act
    const third = limiter.admit('a');

    // Assert
    await expect(third).rejects.toBeInstanceOf(RateLimitedError);
    await expect(limiter.admit('b')).resolves.toBeUndefined();
  });

  it('answers 429 rate_limited with Retry-After in whole seconds, at least one', async () => {
    // Arrange
    const limiter = new ClientRateLimiter({
      limitsOf: async () => ({ ratePerSecond: 0.25, maxImagesPerDay: 10, maxBatchesPerDay: 1000 }),
      now: () => 0,
    });
    await limiter.admit('a');

    // Act
    const err = await limiter.admit('a').catch((e: unknown) => e);

    // Assert
    expect(toHttpError(err)).toMatchObject({ status: 429, code: 'rate_limited', headers: { 'Retry-After': '4' } });
  });
});

describe('limits', () => {
  it('bursts twice the rate, at least one request', () => {
    expect([burstOf(50), burstOf(0.2)]).toEqual([100, 1]);
  });

  it('fills what a client has not set from the defaults', () => {
    expect(withDefaults({ maxImagesPerDay: 3 }, { ratePerSecond: 50, maxImagesPerDay: 100_000, maxBatchesPerDay: 1000 })).toEqual({
      ratePerSecond: 50,
      maxImagesPerDay: 3,
      maxBatchesPerDay: 1000,
    });
  });

  it('counts days in UTC, the next starting at midnight UTC', () => {
    const lateEvening = Date.parse('2026-11-25T23:59:59.999Z');
    expect([utcDay(lateEvening), new Date(nextUtcDay(lateEvening)).toISOString()]).toEqual(['2026-11-25', '2026-11-26T00:00:00.000Z']);
  });
});

describe('quota requests', () => {
  it("counts an upload on the client's day item only below the limit, a limit of 0 admitting none", () => {
    // Act
    const request = countUploadRequest('T', 'acme', '2026-11-25', 0, 0);

    // Assert
    expect(request.Key).toEqual(usageKey('acme', '2026-11-25'));
    expect(request.ConditionExpression).toBe('(attribute_not_exists(#accepted) AND :limit > :zero) OR #accepted < :limit');
    expect(request.ExpressionAttributeNames).toEqual({ '#accepted': 'accepted', '#purgeAt': 'purge_at' });
    expect(request.ExpressionAttributeValues).toMatchObject({ ':limit': 0, ':zero': 0, ':one': 1 });
  });

  it('keeps the usage item apart from batches and keys, under the client registry partition', () => {
    expect(usageKey('acme', '2026-11-25')).toEqual({ batch_id: 'CLIENT#acme', img_fprint: '#USAGE#2026-11-25' });
  });

  it('sets one limit and puts the other back to the default, on a registered client only', () => {
    // Act
    const request = setClientLimitsRequest('T', 'acme', { ratePerSecond: 5, maxImagesPerDay: null });

    // Assert
    expect(request).toMatchObject({
      UpdateExpression: 'SET #ratePerSecond = :ratePerSecond REMOVE #maxImagesPerDay',
      ConditionExpression: 'attribute_exists(#partition)',
      ExpressionAttributeNames: { '#ratePerSecond': 'rate_per_s', '#maxImagesPerDay': 'max_images_day', '#partition': 'batch_id' },
      ExpressionAttributeValues: { ':ratePerSecond': 5 },
    });
  });

  it('marks an upload beyond the quota once, keeping the first day', () => {
    const request = markQuotaExceededRequest(
      'T',
      { clientId: 'acme', batchId: 'b', key: 'uploads/acme/b/x.png', etag: 'e', expiresAt: 1 },
      '2026-11-25',
    );
    expect(request.UpdateExpression).toBe('SET #quotaExceeded = if_not_exists(#quotaExceeded, :day)');
  });
});
