// The retention rules as the store writes them (docs/design.md §6, "A batch expires whole"): every item of a batch
// expires when the batch does, every write into a batch holds only while it has not expired, and the summary is in
// the sparse index the expiry sweep reads.

import { isVisibleBatch } from '../../lib/domain/batch';
import { countRequest } from '../../lib/store/batch/counters';
import { addExpectedRequest, closeRequest, markDeletingRequest, newBatch, putBatchRequest } from '../../lib/store/batch/summary';
import { expiredBatchesQuery, markExpiredRequest } from '../../lib/store/expiry/expired';
import { claimRequest } from '../../lib/store/image/claim';
import { rejectionRequest } from '../../lib/store/image/record';
import { thresholdRequest } from '../../lib/store/review/verdicts';
import { toBatchItem } from '../../lib/store/table/attributes';
import { INDEX, PURGE_AFTER_EXPIRY_S } from '../../lib/store/table/schema';

const NOW_MS = 1_700_000_000_000;
const NOW_S = NOW_MS / 1000;
const batch = newBatch({ clientId: 'demo', batchId: 'b1', now: NOW_MS, debug: false, retentionDays: 3 });

/** An expression with its #placeholders replaced by the stored names and its :values by the values. */
function render(
  req: { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> },
  expression?: string,
): string {
  return (expression ?? '')
    .replace(/#[A-Za-z0-9_]+/g, (p) => req.ExpressionAttributeNames?.[p] ?? p)
    .replace(/:[A-Za-z0-9_]+/g, (v) =>
      req.ExpressionAttributeValues && v in req.ExpressionAttributeValues ? JSON.stringify(req.ExpressionAttributeValues[v]) : v,
    );
}

describe('a batch expires whole', () => {
  it('expires retentionDays after it was made', () => {
    expect(batch.expiresAt).toBe(NOW_S + 3 * 86_400);
  });

  it('gives a claimed image the expiry of its batch, whenever the upload arrives', () => {
    // Arrange: the upload arrives two days after the batch was made.
    const claim = {
      clientId: 'demo',
      batchId: 'b1',
      fprint: 'f'.repeat(32),
      claimId: 'c1',
      key: 'uploads/demo/b1/cat.jpg',
      fileName: 'cat.jpg',
      phash: '0'.repeat(16),
      format: 'jpeg',
      width: 640,
      height: 480,
      now: NOW_MS + 2 * 86_400_000,
      leaseMs: 120_000,
      expiresAt: batch.expiresAt,
    };

    // Act
    const req = claimRequest('T', claim);

    // Assert
    expect(req.ExpressionAttributeValues?.[':ttl']).toBe(batch.expiresAt);
    expect(render(req, req.UpdateExpression)).toContain(`purge_at = ${batch.expiresAt + PURGE_AFTER_EXPIRY_S}`);
  });

  it("leaves DynamoDB's own deletion (TTL on purge_at) to well after the expiry, for the sweep to erase the batch first", () => {
    // Arrange
    const rejected = rejectionRequest('T', {
      clientId: 'demo',
      batchId: 'b1',
      fprint: 'fail-1',
      status: 'fail',
      uploadedAt: NOW_MS,
      expiresAt: batch.expiresAt,
      errorCode: 'NotAnImage',
      errorMessage: 'no',
    });

    // Act
    const items = [putBatchRequest('T', batch).Item, rejected.Item] as Record<string, unknown>[];

    // Assert: a week after the expiry the sweep reads by (ttl), which reads keep filtering on.
    expect(PURGE_AFTER_EXPIRY_S).toBeGreaterThanOrEqual(86_400);
    expect(items.map((i) => [i.ttl, i.purge_at])).toEqual([
      [batch.expiresAt, batch.expiresAt + PURGE_AFTER_EXPIRY_S],
      [batch.expiresAt, batch.expiresAt + PURGE_AFTER_EXPIRY_S],
    ]);
  });

  it('is hidden from reads from the second it expires', () => {
    expect([isVisibleBatch(batch, batch.expiresAt - 1), isVisibleBatch(batch, batch.expiresAt)]).toEqual([true, false]);
  });
});

describe('writes into a batch hold only while it has not expired', () => {
  it.each([
    ['close', closeRequest('T', 'demo', 'b1', NOW_MS)],
    ['declare more files', addExpectedRequest('T', 'demo', 'b1', 2, NOW_MS)],
    ['count an upload', countRequest('T', 'demo', 'b1', { total: 1, pending: 1 }, NOW_MS)],
    ['re-threshold', thresholdRequest('T', 'demo', 'b1', 50, NOW_MS)],
  ])('%s: only on a summary that exists, is not being erased and expires after now', (_what, req) => {
    const condition = render(req, req.ConditionExpression);

    expect(condition).toContain('attribute_exists(batch_id)');
    expect(condition).toContain('attribute_not_exists(deleting)');
    expect(condition).toContain(`ttl > ${NOW_S}`);
  });

  it('DELETE marks only a batch that has not expired (asking again while it is erased resumes the erasure)', () => {
    const req = markDeletingRequest('T', 'demo', 'b1', NOW_MS);

    expect(render(req, req.ConditionExpression)).toBe(`attribute_exists(batch_id) AND ttl > ${NOW_S}`);
  });
});

describe('the expiry sweep reads a sparse index of summaries by expiry', () => {
  it('puts every summary in it, and no image', () => {
    const item = toBatchItem(batch) as unknown as Record<string, unknown>;

    expect(item.exp_due).toBe('due');
    expect(item.ttl).toBe(batch.expiresAt);
  });

  it('queries the batches whose expiry has passed, oldest first, keys only', () => {
    const q = expiredBatchesQuery('T', NOW_S, 100);

    expect(q.IndexName).toBe(INDEX.batchesExpiring);
    expect(render(q, q.KeyConditionExpression)).toBe(`exp_due = "due" AND ttl <= ${NOW_S}`);
    expect(q.Limit).toBe(100);
  });

  it('marks an expired batch for erasure once, or again when the erasure it queued is overdue', () => {
    const req = markExpiredRequest('T', 'demo', 'b1', NOW_MS, NOW_MS - 3_600_000);

    expect(render(req, req.UpdateExpression)).toBe(`SET deleting = true, erase_ts = ${NOW_MS}`);
    expect(render(req, req.ConditionExpression)).toBe(
      `attribute_exists(batch_id) AND ttl <= ${NOW_S} AND (attribute_not_exists(erase_ts) OR erase_ts < ${NOW_MS - 3_600_000})`,
    );
  });
});
