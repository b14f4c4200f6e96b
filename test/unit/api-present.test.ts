import { batchStatus, presentBatch, presentImage } from '../../lib/api/present';
import { BATCH_SK, type BatchItem } from '../../lib/store/schema';

const counters = { n_total: 0, n_success: 0, n_fail: 0, n_duplicate: 0 };

describe('batchStatus', () => {
  it('is open while fewer files arrived than were declared', () => {
    expect(batchStatus({ ...counters, expected: 3, n_total: 2, n_success: 2 })).toBe('open');
  });

  it('is open before any file arrived when none were declared', () => {
    expect(batchStatus({ ...counters })).toBe('open');
  });

  it('is processing while an arrived file is not finished', () => {
    expect(batchStatus({ ...counters, expected: 3, n_total: 3, n_success: 1, n_fail: 1 })).toBe('processing');
  });

  it('is done when every arrived file is success, fail or duplicate', () => {
    expect(batchStatus({ ...counters, expected: 3, n_total: 3, n_success: 1, n_fail: 1, n_duplicate: 1 })).toBe('done');
  });

  it('is done for an undeclared batch whose uploads are all finished', () => {
    expect(batchStatus({ ...counters, n_total: 2, n_success: 2 })).toBe('done');
  });
});

describe('presentImage', () => {
  it('gives ISO-8601 UTC times, labels and the error', () => {
    const image = presentImage({
      batch_id: 'B',
      img_fprint: 'f',
      op_status: 'fail',
      ttl: 1,
      file_name: 'a.jpg',
      upload_ts: Date.UTC(2024, 0, 2, 3, 4, 5),
      labels: [{ name: 'Cat', confidence: 97.5 }],
      err_code: 'NotAnImage',
      err_msg: 'not an image',
    });

    expect(image).toEqual({
      batchId: 'B',
      fprint: 'f',
      fileName: 'a.jpg',
      status: 'fail',
      isCat: null,
      labels: [{ name: 'Cat', confidence: 97.5 }],
      uploadedAt: '2024-01-02T03:04:05.000Z',
      classifiedAt: null,
      duplicates: 0,
      error: { code: 'NotAnImage', message: 'not an image' },
    });
  });
});

describe('presentBatch', () => {
  it('gives counts, status and times', () => {
    const item: BatchItem = {
      batch_id: 'B',
      img_fprint: BATCH_SK,
      owner_id: 'acme',
      created_ts: Date.UTC(2024, 0, 1),
      debug: true,
      retention_days: 7,
      ttl: Date.UTC(2024, 0, 8) / 1000,
      expected: 2,
      n_total: 2,
      n_success: 1,
      n_fail: 0,
      n_duplicate: 1,
      n_cats: 1,
    };

    expect(presentBatch(item)).toEqual({
      batchId: 'B',
      status: 'done',
      counts: { total: 2, success: 1, fail: 0, duplicate: 1, cats: 1 },
      expected: 2,
      debug: true,
      retentionDays: 7,
      createdAt: '2024-01-01T00:00:00.000Z',
      expiresAt: '2024-01-08T00:00:00.000Z',
    });
  });
});
