import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ZERO_COUNTS } from '../../lib/domain/counts';
import { countRecords, countRequest, recountQuery, setCountsRequest } from '../../lib/store/batch/counters';
import {
  addExpectedRequest,
  autoCloseRequest,
  closeRequest,
  markDoneRequest,
  newBatch,
  putBatchRequest,
} from '../../lib/store/batch/summary';
import { claimRequest, takeoverRequest } from '../../lib/store/image/claim';
import { duplicateRequest, finishCounts, finishRequest, rejectionRequest } from '../../lib/store/image/record';
import { BATCH_SK, purgeAt, uploadItemKey } from '../../lib/store/table/schema';
import { transaction } from '../../lib/store/table/transact';
import { duplicateMarkRequest, endAttemptRequest, startAttemptRequest } from '../../lib/store/upload/attempts';

const claim = {
  clientId: 'demo',
  batchId: 'b1',
  fprint: 'f'.repeat(32),
  claimId: 'claim-1',
  key: 'uploads/demo/b1/cat.jpg',
  etag: 'e1',
  fileName: 'cat.jpg',
  phash: '0123456789abcdef',
  format: 'jpeg',
  width: 640,
  height: 480,
  now: 1_700_000_000_000,
  leaseMs: 120_000,
  expiresAt: 1_700_000_000 + 30 * 86_400,
};

/** An expression with its #names replaced by the stored attribute names, for readable assertions. */
const stored = (req: { ExpressionAttributeNames?: Record<string, string> }, expression: string | undefined): string =>
  Object.entries(req.ExpressionAttributeNames ?? {})
    .sort(([a], [b]) => b.length - a.length)
    .reduce((text, [placeholder, name]) => text.split(placeholder).join(name), expression ?? '');

describe('claims', () => {
  it('claims only an image the batch has no record of, in its client-scoped partition', () => {
    const req = claimRequest('T', claim);

    expect(req.Key).toEqual({ batch_id: 'demo#b1', img_fprint: claim.fprint });
    expect(stored(req, req.ConditionExpression)).toBe('attribute_not_exists(img_fprint)');
    expect(req.ExpressionAttributeValues).toMatchObject({ ':lease': claim.now + 120_000, ':claim': 'claim-1', ':etag': 'e1' });
  });

  it('writes no status, time, cat or log index key: a claimed image enters only client-fprint until its result', () => {
    const set = stored(claimRequest('T', claim), claimRequest('T', claim).UpdateExpression);

    expect(set).toContain('client_id = :client');
    expect(set).toContain('received_ts = :now');
    for (const key of ['status_ts', 'upload_ts', 'cat_ts', 'log_ts']) expect(set).not.toContain(`${key} =`);
  });

  it('takes over only the expired claim it saw, keeping the first receipt time and expiry', () => {
    const req = takeoverRequest('T', claim, 'crashed');

    expect(stored(req, req.ConditionExpression)).toBe('op_status = :processing AND lease_until < :now AND claim_id = :previous');
    expect(stored(req, req.UpdateExpression)).not.toMatch(/received_ts|ttl/);
  });
});

describe('finishRequest', () => {
  const base = { uploadedAt: 1_700_000_000_000, now: 1_700_000_001_000, restingKey: 'processed/demo/b1/f.jpg' };
  const success = {
    status: 'success' as const,
    isCat: false,
    catConfidence: 0,
    cats: [],
    labels: [],
    detection: { model: 'm', labels: [] },
  };

  it('writes the time and status index keys with the result, only for the claim holder, and ends the claim', () => {
    const req = finishRequest('T', claim, { ...base, result: success });

    expect(req.ExpressionAttributeValues).toMatchObject({ ':uploadedAt': base.uploadedAt, ':statusKey': 'success#001700000000000' });
    expect(stored(req, req.ConditionExpression)).toBe('claim_id = :claim');
    expect(stored(req, req.UpdateExpression)).toMatch(/REMOVE claim_id, lease_until, rek_paid$/);
  });

  it('writes cat_ts for a cat only, and logs with log_ts only when there are logs', () => {
    const cat = stored(
      finishRequest('T', claim, { ...base, result: { ...success, isCat: true } }),
      finishRequest('T', claim, { ...base, result: { ...success, isCat: true } }).UpdateExpression,
    );
    const plain = finishRequest('T', claim, { ...base, result: success });
    const logged = finishRequest('T', claim, { ...base, result: success, logs: ['a'] });

    expect(cat).toContain('cat_ts = :uploadedAt');
    expect(stored(plain, plain.UpdateExpression)).not.toMatch(/cat_ts|log_ts/);
    expect(stored(logged, logged.UpdateExpression)).toContain('logs = :logs, log_ts = :uploadedAt');
  });

  it('records an error code and a bounded message for a failure', () => {
    const req = finishRequest('T', claim, {
      ...base,
      result: { status: 'fail', error: { code: 'DetectionRejected', message: 'x'.repeat(2000) } },
    });

    expect(req.ExpressionAttributeValues?.[':errorCode']).toBe('DetectionRejected');
    expect((req.ExpressionAttributeValues?.[':errorMessage'] as string).length).toBe(500);
  });

  it('moves pending to success (and cats) or to fail', () => {
    expect(finishCounts(success)).toEqual({ pending: -1, success: 1 });
    expect(finishCounts({ ...success, isCat: true })).toEqual({ pending: -1, success: 1, cats: 1 });
    expect(finishCounts({ status: 'fail', error: { code: 'X', message: 'y' } })).toEqual({ pending: -1, fail: 1 });
  });

  it('records a reused result with the time of the classification it came from, counted as reused success', () => {
    const { detection: _none, ...copied } = success;
    const reused = { ...copied, isCat: true, catConfidence: 91, reusedFrom: 1_600_000_000_000 };
    const req = finishRequest('T', claim, { ...base, result: reused });

    expect(req.ExpressionAttributeValues).toMatchObject({ ':now': 1_600_000_000_000, ':reused': true, ':catConfidence': 91 });
    expect(stored(req, req.UpdateExpression)).not.toContain('rek_resp');
    expect(stored(req, req.UpdateExpression)).toContain('reused = :reused');
    expect(finishCounts(reused)).toEqual({ pending: -1, success: 1, cats: 1, reused: 1 });
  });
});

describe('duplicates and rejections', () => {
  const original = { clientId: 'demo', batchId: 'b1', fprint: 'f', status: 'success' as const, expiresAt: 1 };

  it('adds the file name once: a redelivered duplicate fails the condition', () => {
    const req = duplicateRequest('T', original, 'copy.jpg');

    expect(stored(req, req.UpdateExpression)).toBe('ADD dup_count :one, dup_files :name');
    expect(stored(req, req.ConditionExpression)).toContain('NOT contains(dup_files, :file)');
  });

  it('only counts once the name list is full', () => {
    const full = { ...original, duplicateFiles: Array.from({ length: 50 }, (_, i) => `n${i}`) };

    expect(stored(duplicateRequest('T', full, 'x'), duplicateRequest('T', full, 'x').UpdateExpression)).toBe('ADD dup_count :one');
  });

  it("past the names kept, guards the count with a mark on the upload's own item, set once", () => {
    const upload = { clientId: 'demo', batchId: 'b1', key: 'uploads/demo/b1/x', etag: 'e9', expiresAt: 99 };
    const req = duplicateMarkRequest('T', upload, 'f');

    expect(req.Key).toEqual(uploadItemKey(upload));
    expect(stored(req, req.ConditionExpression)).toBe('attribute_not_exists(dup_of)');
  });

  it('writes a fail record once, with its status key and no cat or log index keys', () => {
    const req = rejectionRequest('T', {
      ...original,
      fprint: 'fail-abc',
      status: 'fail',
      uploadedAt: 1_700_000_000_000,
      errorCode: 'EmptyFile',
      errorMessage: 'the file is empty (0 bytes)',
    });

    expect(stored(req, req.ConditionExpression)).toBe('attribute_not_exists(img_fprint)');
    expect(req.Item).toMatchObject({ batch_id: 'demo#b1', op_status: 'fail', err_code: 'EmptyFile', status_ts: 'fail#001700000000000' });
    expect(req.Item).not.toHaveProperty('cat_ts');
    expect(req.Item).not.toHaveProperty('log_ts');
  });

  it('keys a fail record that carries logs into the logs index by its upload time', () => {
    const req = rejectionRequest('T', {
      ...original,
      fprint: 'fail-abc',
      status: 'fail',
      uploadedAt: 1_700_000_000_000,
      logs: ['rejected'],
    });

    expect(req.Item).toMatchObject({ logs: ['rejected'], log_ts: 1_700_000_000_000 });
  });
});

describe('batch summary writes', () => {
  const batch = newBatch({ clientId: 'acme', batchId: 'holiday', now: 1_000, debug: false, retentionDays: 1, expected: 2 });

  it('creates a batch open and counted at zero, unless the client has one of that name', () => {
    const req = putBatchRequest('T', batch);

    expect(req.Item).toMatchObject({
      batch_id: 'acme#holiday',
      img_fprint: BATCH_SK,
      owner_id: 'acme',
      created_ts: 1_000,
      expected: 2,
      closed: false,
      n_total: 0,
      n_pending: 0,
      n_reused: 0,
    });
    expect(stored(req, req.ConditionExpression)).toBe('attribute_not_exists(batch_id)');
  });

  it('moves counters with one ADD and answers the summary after it', () => {
    const req = countRequest('T', 'acme', 'holiday', { total: 1, pending: 1 }, 5_000);

    expect(req.Key).toEqual({ batch_id: 'acme#holiday', img_fprint: BATCH_SK });
    expect(stored(req, req.UpdateExpression)).toBe('ADD n_total :total, n_pending :pending');
    expect(req.ReturnValues).toBe('ALL_NEW');
  });

  it('moves counters only on a summary that exists, is not being erased and has not expired, so no late upload recreates one', () => {
    const req = countRequest('T', 'acme', 'holiday', { total: 1 }, 5_000);

    expect(stored(req, req.ConditionExpression)).toBe('attribute_exists(batch_id) AND attribute_not_exists(deleting) AND ttl > :nowS');
  });

  it('closes only an open batch, and with `expected` only if no more files arrived than that', () => {
    const req = closeRequest('T', 'acme', 'holiday', 5, 3);

    expect(stored(req, req.UpdateExpression)).toBe('SET closed = :true, closed_ts = :now, expected = :expected');
    expect(stored(req, req.ConditionExpression)).toBe(
      'attribute_exists(batch_id) AND attribute_not_exists(deleting) AND ttl > :nowS AND (attribute_not_exists(closed) OR closed = :false) AND n_total <= :expected',
    );
  });

  it('closes by itself only once the declared files arrived', () => {
    const req = autoCloseRequest('T', 'acme', 'holiday', 5);

    expect(stored(req, req.ConditionExpression)).toBe('(attribute_not_exists(closed) OR closed = :false) AND expected <= n_total');
  });

  it('stamps doneAt once, by the write that finds the batch done', () => {
    const req = markDoneRequest('T', 'acme', 'holiday', 5);

    expect(stored(req, req.ConditionExpression)).toBe(
      'closed = :true AND n_pending = :zero AND attribute_not_exists(done_ts) AND attribute_not_exists(deleting) AND (attribute_not_exists(expected) OR expected <= n_total)',
    );
  });

  it('grows expected only for an open batch', () => {
    const req = addExpectedRequest('T', 'acme', 'holiday', 3, 5_000);

    expect(stored(req, req.UpdateExpression)).toBe('SET expected = if_not_exists(expected, :zero) + :files');
    expect(stored(req, req.ConditionExpression)).toContain('closed = :false');
  });
});

describe('recount', () => {
  it('reads the images of its own partition, projected to what it counts, consistently', () => {
    const req = recountQuery('T', 'acme', 'holiday');

    expect(req.ExpressionAttributeValues).toEqual({ ':partition': 'acme#holiday', ':summary': BATCH_SK });
    expect(stored(req, req.ProjectionExpression)).toBe('op_status, rek_iscat, dup_count, reused, review');
    expect(req.ConsistentRead).toBe(true);
  });

  it('counts each record once and each duplicate upload on it, keeping total = pending + success + fail + duplicate', () => {
    const counts = countRecords([
      { op_status: 'success', rek_iscat: true, dup_count: 2 },
      { op_status: 'success', rek_iscat: false },
      { op_status: 'processing' },
      { op_status: 'fail' },
    ]);

    expect(counts).toEqual({ ...ZERO_COUNTS, total: 6, pending: 1, success: 2, fail: 1, duplicate: 2, cats: 1 });
    expect(counts.total).toBe(counts.pending + counts.success + counts.fail + counts.duplicate);
  });

  it('sets the counters only if they still hold what was read before counting', () => {
    const was = { ...ZERO_COUNTS, total: 3, success: 1 };
    const req = setCountsRequest('T', 'acme', 'holiday', was, { ...ZERO_COUNTS, total: 4, success: 2 });

    // A counter read non-zero must hold its value, with no "absent" alternative beside it.
    expect(stored(req, req.ConditionExpression)).toMatch(/(^| AND )n_total = :was_total( AND |$)/);
    expect(stored(req, req.ConditionExpression)).toContain('(n_pending = :was_pending OR attribute_not_exists(n_pending))');
    expect(req.ExpressionAttributeValues).toMatchObject({ ':total': 4, ':was_total': 3 });
  });
});

describe('transaction', () => {
  it('puts a record write and its counter move in one TransactWriteItems, without ReturnValues', () => {
    const tx = transaction(claimRequest('T', claim), countRequest('T', 'demo', 'b1', { total: 1, pending: 1 }, 5_000));

    expect(tx.TransactItems?.map((i) => Object.keys(i)[0])).toEqual(['Update', 'Update']);
    expect((tx.TransactItems?.[1]?.Update as UpdateCommandInput).ReturnValues).toBeUndefined();
  });
});

describe("an upload's own item", () => {
  const upload = { clientId: 'demo', batchId: 'b1', key: 'uploads/demo/b1/cat.jpg', etag: 'e1', expiresAt: 1_700_086_400 };

  it('lives apart from the batch partition, one per key and ETag', () => {
    const key = uploadItemKey(upload);

    expect(key.batch_id).toBe('UPLOAD#demo#b1');
    expect(uploadItemKey({ ...upload, etag: 'e2' }).img_fprint).not.toBe(key.img_fprint);
    expect(uploadItemKey({ ...upload }).img_fprint).toBe(key.img_fprint);
  });

  it('counts an attempt as it starts, answering the count with this one in it, and keeps it as long as the batch', () => {
    const req = startAttemptRequest('T', upload);

    expect(stored(req, req.UpdateExpression)).toBe(
      'ADD attempts :one SET ttl = if_not_exists(ttl, :ttl), purge_at = if_not_exists(purge_at, :purge)',
    );
    expect(req.ExpressionAttributeValues).toEqual({ ':one': 1, ':ttl': upload.expiresAt, ':purge': purgeAt(upload.expiresAt) });
    expect(req.ReturnValues).toBe('ALL_NEW');
  });

  it('takes back a handed-back attempt without going below zero', () => {
    const req = endAttemptRequest('T', upload);

    expect(stored(req, req.ConditionExpression)).toBe('attempts > :zero');
  });
});

describe("a new image's claim counts only into a batch that takes uploads", () => {
  it('conditions the counter move on open, or closed with fewer arrived than declared', () => {
    const req = countRequest('T', 'demo', 'b1', { total: 1, pending: 1 }, 1_700_000_000_000, { takingUploads: true });

    expect(stored(req, req.ConditionExpression)).toBe(
      'attribute_exists(batch_id) AND attribute_not_exists(deleting) AND ttl > :nowS AND (attribute_not_exists(closed) OR closed = :false OR n_total < expected)',
    );
  });

  it('leaves every other counter move free of it (a result, a rejection, a duplicate)', () => {
    const req = countRequest('T', 'demo', 'b1', { pending: -1, success: 1 }, 1_700_000_000_000);

    expect(stored(req, req.ConditionExpression)).toBe('attribute_exists(batch_id) AND attribute_not_exists(deleting) AND ttl > :nowS');
  });
});
