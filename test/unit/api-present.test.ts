import { presentBatch, presentImage } from '../../lib/api/present';
import { type Batch, batchStatus, reportedStatus } from '../../lib/domain/batch';
import { ZERO_COUNTS } from '../../lib/domain/counts';
import type { Image } from '../../lib/domain/image';
import { toBatch, toBatchItem, toImage, toImageItem } from '../../lib/store/table/attributes';
import { BATCH_SK } from '../../lib/store/table/schema';

const counts = (c: Partial<Batch['counts']>): Batch['counts'] => ({ ...ZERO_COUNTS, ...c });

describe('batchStatus', () => {
  it('is open until the batch is closed, however many files finished', () => {
    expect(batchStatus({ closed: false, expected: 2, counts: counts({ total: 2, success: 2 }) })).toBe('open');
  });

  it('is processing once closed while an image is pending', () => {
    expect(batchStatus({ closed: true, counts: counts({ total: 3, pending: 1, success: 2 }) })).toBe('processing');
  });

  it('is processing once closed while declared files have not all arrived', () => {
    expect(batchStatus({ closed: true, expected: 3, counts: counts({ total: 2, success: 2 }) })).toBe('processing');
  });

  it('is done once closed, nothing pending and every declared file arrived', () => {
    expect(batchStatus({ closed: true, expected: 3, counts: counts({ total: 3, success: 1, fail: 1, duplicate: 1 }) })).toBe('done');
  });

  it('is done for a closed batch that declared nothing once nothing is pending', () => {
    expect(batchStatus({ closed: true, counts: counts({ total: 2, success: 2 }) })).toBe('done');
  });
});

describe('reportedStatus', () => {
  const settled = { closed: true, counts: counts({ total: 1, success: 1 }) };

  it('says processing while the write that stamps doneAt has not landed, though the counters are settled', () => {
    expect([batchStatus(settled), reportedStatus(settled)]).toEqual(['done', 'processing']);
  });

  it('says done once doneAt is stamped', () => {
    expect(reportedStatus({ ...settled, doneAt: 1 })).toBe('done');
  });

  it('says open for a batch not yet closed', () => {
    expect(reportedStatus({ closed: false, counts: counts({ total: 1, pending: 1 }) })).toBe('open');
  });
});

describe('the attribute table', () => {
  const image: Image = {
    clientId: 'acme',
    batchId: 'holiday',
    fprint: 'f1',
    status: 'success',
    uploadedAt: 1000,
    classifiedAt: 2000,
    expiresAt: 99,
    fileName: 'a.jpg',
    isCat: true,
    labels: [{ name: 'Cat', confidence: 97.5 }],
    duplicates: 2,
    duplicateFiles: ['b.jpg', 'c.jpg'],
  };

  it('stores an image under its client-scoped partition with the stored names', () => {
    expect(toImageItem(image)).toEqual({
      batch_id: 'acme#holiday',
      img_fprint: 'f1',
      client_id: 'acme',
      op_status: 'success',
      upload_ts: 1000,
      rek_ts: 2000,
      ttl: 99,
      // DynamoDB's TTL attribute, a week after the expiry the reads filter on (docs/design.md §2).
      purge_at: 99 + 7 * 86_400,
      file_name: 'a.jpg',
      rek_iscat: true,
      labels: [{ name: 'Cat', confidence: 97.5 }],
      dup_count: 2,
      dup_files: ['b.jpg', 'c.jpg'],
    });
  });

  it('reads a stored image back to the same domain object', () => {
    expect(toImage(toImageItem(image))).toEqual(image);
  });

  it('reads the receipt time of an image still being classified as its upload time', () => {
    expect(
      toImage({ batch_id: 'acme#b', img_fprint: 'f', client_id: 'acme', op_status: 'processing', received_ts: 5, ttl: 9 }).uploadedAt,
    ).toBe(5);
  });

  it('reads a batch back to the same domain object, counters included', () => {
    const batch: Batch = {
      clientId: 'acme',
      batchId: 'holiday',
      createdAt: 1,
      debug: false,
      retentionDays: 7,
      expiresAt: 2,
      expected: 3,
      closed: true,
      closedAt: 5,
      counts: counts({ total: 3, pending: 1, success: 2, cats: 1 }),
    };

    const item = toBatchItem(batch);

    expect(item).toMatchObject({
      batch_id: 'acme#holiday',
      img_fprint: BATCH_SK,
      owner_id: 'acme',
      n_total: 3,
      n_pending: 1,
      closed: true,
      closed_ts: 5,
    });
    expect(toBatch(item)).toEqual(batch);
  });
});

describe('presentImage', () => {
  it('gives ISO-8601 UTC times, labels and the error', () => {
    const answer = presentImage({
      clientId: 'acme',
      batchId: 'B',
      fprint: 'f',
      status: 'fail',
      expiresAt: 1,
      fileName: 'a.jpg',
      uploadedAt: Date.UTC(2024, 0, 2, 3, 4, 5),
      labels: [{ name: 'Cat', confidence: 97.5 }],
      errorCode: 'NotAnImage',
      errorMessage: 'not an image',
    });

    expect(answer).toEqual({
      audit: null,
      batchId: 'B',
      fprint: 'f',
      fileName: 'a.jpg',
      status: 'fail',
      isCat: null,
      catConfidence: null,
      labels: [{ name: 'Cat', confidence: 97.5 }],
      cats: [],
      uploadedAt: '2024-01-02T03:04:05.000Z',
      classifiedAt: null,
      duplicates: 0,
      duplicateFiles: [],
      reused: false,
      machineIsCat: null,
      previous: null,
      review: null,
      error: { code: 'NotAnImage', message: 'not an image' },
      capturedAt: null,
      camera: null,
      location: null,
      model: null,
      thumbnailUrl: null,
      imageUrl: null,
    });
  });

  it("lists the later uploads' file names as the store keeps them, sorted", () => {
    const stored = toImage({
      batch_id: 'acme#B',
      img_fprint: 'f',
      client_id: 'acme',
      op_status: 'success',
      ttl: 9,
      file_name: 'a.jpg',
      dup_count: 2,
      dup_files: new Set(['z/copy.jpg', 'b.jpg']),
    });

    expect(presentImage(stored)).toMatchObject({ fileName: 'a.jpg', duplicates: 2, duplicateFiles: ['b.jpg', 'z/copy.jpg'] });
  });
});

describe('presentBatch', () => {
  it('gives the bare batch id, lifecycle fields, counts and times', () => {
    const batch: Batch = {
      clientId: 'acme',
      batchId: 'B',
      createdAt: Date.UTC(2024, 0, 1),
      debug: true,
      retentionDays: 7,
      expiresAt: Date.UTC(2024, 0, 8) / 1000,
      expected: 2,
      closed: true,
      closedAt: Date.UTC(2024, 0, 1, 1),
      doneAt: Date.UTC(2024, 0, 1, 2),
      counts: counts({ total: 2, success: 1, duplicate: 1, cats: 1 }),
    };

    expect(presentBatch(batch, 0.001)).toEqual({
      batchId: 'B',
      status: 'done',
      closed: true,
      expected: 2,
      counts: { total: 2, pending: 0, success: 1, fail: 0, duplicate: 1, reused: 0, cats: 1, reviewed: 0, corrected: 0 },
      usage: { detectLabelsCalls: 1, reused: 0, duplicates: 1, estimatedCostUsd: 0.001, savedUsd: 0.001 },
      labels: null,
      models: null,
      debug: true,
      catMinConfidence: null,
      retentionDays: 7,
      createdAt: '2024-01-01T00:00:00.000Z',
      closedAt: '2024-01-01T01:00:00.000Z',
      doneAt: '2024-01-01T02:00:00.000Z',
      expiresAt: '2024-01-08T00:00:00.000Z',
      callbackUrl: null,
      callback: null,
    });
  });
});
