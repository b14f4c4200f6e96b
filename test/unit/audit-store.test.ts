// The audit sample as stored (lib/store/audit/queue.ts): the draw's write, the batch-audit keys, and a review of an audited
// image moving its key with the verdict.
import type { Audit } from '../../lib/domain/review';
import { auditRequest } from '../../lib/store/audit/draw';
import { auditEntriesRequest, auditEntryOf } from '../../lib/store/audit/queue';
import { reviewRequest } from '../../lib/store/review/verdicts';
import { auditKey } from '../../lib/store/table/schema';

const audit: Audit = { drawnAt: 1000, stratum: 'notCat', order: '00ab12cd34ef', seed: 42 };
const image = { clientId: 'acme', batchId: 'b', fprint: 'f', uploadedAt: 5, isCat: false, catConfidence: 10 };

describe('the batch-audit key', () => {
  it('holds pending or reviewed, the random order, the stratum and the verdict, and reads back', () => {
    expect(auditKey(audit, undefined)).toBe('P#00ab12cd34efn');
    expect(auditKey(audit, { isCat: true })).toBe('R#00ab12cd34efnc');
    expect(auditEntryOf('P#00ab12cd34efn')).toEqual({ stratum: 'notCat' });
    expect(auditEntryOf('R#00ab12cd34efcn')).toEqual({ stratum: 'cat', reviewedCat: false });
  });

  it('the estimate reads every entry, naming only what its key condition uses', () => {
    expect(auditEntriesRequest('T', 'acme', 'b', false)).toMatchObject({
      KeyConditionExpression: '#partition = :partition',
      ExpressionAttributeNames: { '#partition': 'batch_id' },
      ExpressionAttributeValues: { ':partition': 'acme#b' },
    });
    expect(Object.keys(auditEntriesRequest('T', 'acme', 'b', false).ExpressionAttributeNames!)).toEqual(['#partition']);
  });

  it('the queue reads the pending range only, by key', () => {
    expect(auditEntriesRequest('T', 'acme', 'b', true)).toMatchObject({
      IndexName: 'batch-audit',
      KeyConditionExpression: '#partition = :partition AND begins_with(#auditKey, :pending)',
      ExpressionAttributeValues: { ':partition': 'acme#b', ':pending': 'P#' },
    });
  });
});

describe('a draw', () => {
  it('marks a classified image not drawn before, with the verdict read', () => {
    const req = auditRequest('T', image, audit);
    expect(req.UpdateExpression).toBe('SET #audit = :audit, #auditKey = :key');
    expect(req.ConditionExpression).toBe('#status = :success AND attribute_not_exists(#audit) AND attribute_not_exists(#review)');
    expect(req.ExpressionAttributeValues).toMatchObject({
      ':key': 'P#00ab12cd34efn',
      ':audit': { ts: 1000, s: 'n', o: '00ab12cd34ef', seed: 42 },
    });
  });

  it('enters an image reviewed before the draw as reviewed: the sample is random whenever the review came', () => {
    const review = { isCat: true, reviewedAt: 7, machineIsCat: false };
    const req = auditRequest('T', { ...image, review }, audit);
    expect(req.ConditionExpression).toContain('#review.#ts = :ts');
    expect(req.ExpressionAttributeValues).toMatchObject({ ':key': 'R#00ab12cd34efnc', ':ts': 7 });
  });
});

describe('a review of an audited image', () => {
  it('moves its audit key to reviewed with the verdict, and back to pending when withdrawn', () => {
    const review = { isCat: true, reviewedAt: 7, machineIsCat: false };
    const given = reviewRequest('T', { ...image, audit }, review);
    expect(given.UpdateExpression).toContain('#auditKey = :auditKey');
    expect(given.ConditionExpression).not.toContain('#audit)');
    // DynamoDB refuses a name no expression uses.
    expect(Object.keys(given.ExpressionAttributeNames!)).not.toContain('#audit');
    expect(given.ExpressionAttributeValues).toMatchObject({ ':auditKey': 'R#00ab12cd34efnc' });
    const withdrawn = reviewRequest('T', { ...image, isCat: true, audit, review }, undefined);
    expect(withdrawn.ExpressionAttributeValues).toMatchObject({ ':auditKey': 'P#00ab12cd34efn' });
  });
});
