import { buildClaim, buildCount, buildDuplicate, buildFinish, buildRejection } from '../../lib/store/records';
import { BATCH_SK } from '../../lib/store/schema';

const claim = {
  batchId: 'b1',
  fprint: 'f'.repeat(32),
  clientId: 'demo',
  key: 'uploads/demo/b1/cat.jpg',
  fileName: 'cat.jpg',
  phash: '0123456789abcdef',
  format: 'jpeg',
  width: 640,
  height: 480,
  claimId: 'claim-1',
  now: 1_700_000_000_000,
  leaseMs: 120_000,
  retentionDays: 30,
};

describe('buildClaim', () => {
  it('claims only a new image or a processing claim whose lease has expired', () => {
    const req = buildClaim('T', claim);

    expect(req.Key).toEqual({ batch_id: 'b1', img_fprint: claim.fprint });
    expect(req.ConditionExpression).toBe('attribute_not_exists(img_fprint) OR (op_status = :processing AND lease_until < :now)');
    expect(req.ExpressionAttributeValues).toMatchObject({ ':lease': claim.now + 120_000, ':now': claim.now, ':claim': 'claim-1' });
  });

  it('keeps the first receipt time and expiry when taking over', () => {
    expect(buildClaim('T', claim).UpdateExpression).toContain('received_ts = if_not_exists(received_ts, :now)');
    expect(buildClaim('T', claim).UpdateExpression).toContain('#ttl = if_not_exists(#ttl, :ttl)');
  });

  it('writes no status, time, cat or log index key: a claimed image enters only client-fprint until its result', () => {
    const set = buildClaim('T', claim).UpdateExpression!;

    expect(set).toContain('client_id = :client');
    for (const key of ['status_ts', 'upload_ts', 'cat_ts', 'log_ts']) expect(set).not.toContain(`${key} =`);
  });
});

describe('buildFinish', () => {
  const base = { uploadTs: 1_700_000_000_000, now: 1_700_000_001_000, processedKey: 'processed/demo/b1/f.jpg' };

  it('writes the time and status index keys with the result', () => {
    const req = buildFinish('T', 'b1', 'f', 'claim-1', { ...base, status: 'success', isCat: false, labels: [] });

    expect(req.ExpressionAttributeValues).toMatchObject({
      ':upload_ts': base.uploadTs,
      ':status_ts': 'success#001700000000000',
    });
  });

  it('only lets the claim holder write, and ends the claim', () => {
    const req = buildFinish('T', 'b1', 'f', 'claim-1', { ...base, status: 'success', isCat: false, labels: [] });

    expect(req.ConditionExpression).toBe('claim_id = :claim');
    expect(req.UpdateExpression).toMatch(/REMOVE claim_id, lease_until$/);
  });

  it('writes cat_ts for a cat, feeding the sparse client-cats index', () => {
    const req = buildFinish('T', 'b1', 'f', 'c', { ...base, status: 'success', isCat: true, labels: [{ name: 'Cat', confidence: 97 }] });

    expect(req.UpdateExpression).toContain('cat_ts = :upload_ts');
    expect(req.ExpressionAttributeValues?.[':upload_ts']).toBe(base.uploadTs);
  });

  it('writes no cat_ts and no log_ts for a non-cat without debug', () => {
    const req = buildFinish('T', 'b1', 'f', 'c', { ...base, status: 'success', isCat: false, labels: [] });

    expect(req.UpdateExpression).not.toContain('cat_ts');
    expect(req.UpdateExpression).not.toContain('log_ts');
  });

  it('writes logs and log_ts only when there are logs (the sparse batch-logs index)', () => {
    const req = buildFinish('T', 'b1', 'f', 'c', { ...base, status: 'success', isCat: false, labels: [], logs: ['a'] });

    expect(req.UpdateExpression).toContain('logs = :logs, log_ts = :upload_ts');
  });

  it('records an error code and a bounded message for a failure', () => {
    const req = buildFinish('T', 'b1', 'f', 'c', { ...base, status: 'fail', error: { code: 'DetectionRejected', message: 'x'.repeat(2000) } });

    expect(req.ExpressionAttributeValues?.[':err_code']).toBe('DetectionRejected');
    expect((req.ExpressionAttributeValues?.[':err_msg'] as string).length).toBe(500);
    expect(req.ExpressionAttributeValues?.[':status_ts']).toBe('fail#001700000000000');
  });
});

describe('buildDuplicate', () => {
  it('adds the file name once: a redelivered duplicate fails the condition', () => {
    const req = buildDuplicate('T', 'b1', 'f', 'copy.jpg', true);

    expect(req.UpdateExpression).toBe('ADD dup_count :one, dup_files :name');
    expect(req.ConditionExpression).toContain('NOT contains(dup_files, :file)');
    expect(req.ExpressionAttributeValues?.[':name']).toEqual(new Set(['copy.jpg']));
  });

  it('only counts once the name list is full', () => {
    expect(buildDuplicate('T', 'b1', 'f', 'copy.jpg', false).UpdateExpression).toBe('ADD dup_count :one');
  });
});

describe('buildRejection', () => {
  it('writes a fail record once, with no cat or log index keys unless there are logs', () => {
    const req = buildRejection('T', {
      batchId: 'b1',
      recordKey: 'fail-abc',
      clientId: 'demo',
      key: 'uploads/demo/b1/x.jpg',
      fileName: 'x.jpg',
      now: 1_700_000_000_000,
      retentionDays: 1,
      error: { code: 'EmptyFile', message: 'the file is empty (0 bytes)' },
      processedKey: 'failed/demo/b1/x.jpg',
    });

    expect(req.ConditionExpression).toBe('attribute_not_exists(img_fprint)');
    expect(req.Item).toMatchObject({ op_status: 'fail', err_code: 'EmptyFile', ttl: 1_700_000_000 + 86_400 });
    expect(req.Item).not.toHaveProperty('cat_ts');
    expect(req.Item).not.toHaveProperty('log_ts');
  });
});

describe('buildCount', () => {
  it('adds to the summary item counters atomically', () => {
    const req = buildCount('T', 'b1', { n_success: 1, n_cats: 1 });

    expect(req.Key).toEqual({ batch_id: 'b1', img_fprint: BATCH_SK });
    expect(req.UpdateExpression).toBe('ADD n_success :n_success, n_cats :n_cats');
  });
});
