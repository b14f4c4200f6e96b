import { backoffDelay } from '../../lib/backoff';
import {
  batchByStatusRequest,
  batchImagesRequest,
  batchLogsRequest,
  batchResultsRequest,
  batchTimeRangeRequest,
} from '../../lib/store/batch/images';
import { batchSummaryRequest } from '../../lib/store/batch/read';
import {
  clientBatchesRequest,
  clientByStatusRequest,
  clientCatsRequest,
  clientImagesRequest,
  clientTimeRangeRequest,
  imageAcrossBatchesRequest,
} from '../../lib/store/client/images';
import { batchGetRequests, imageRequest } from '../../lib/store/image/reads';
import type { QueryPlan } from '../../lib/store/table/expressions';
import { BATCH_GET_MAX_KEYS, isVisibleImage, pageRequest, startKeyAfter } from '../../lib/store/table/query';
import { BATCH_SK, INDEX } from '../../lib/store/table/schema';

const T = 'IceCatWrangler';
const NOW_S = 1_700_000_000;
const batch = { tableName: T, batchId: 'B1', clientId: 'acme', nowS: NOW_S };
const client = { tableName: T, clientId: 'acme', nowS: NOW_S };

/** The expression with placeholders replaced by attribute names and values, for readable assertions. */
function expand(plan: QueryPlan, expression: 'KeyConditionExpression' | 'FilterExpression'): string {
  let text = plan.input[expression] ?? '';
  for (const [p, name] of Object.entries(plan.input.ExpressionAttributeNames ?? {})) text = text.split(p).join(name);
  const values = Object.entries(plan.input.ExpressionAttributeValues ?? {}).sort(([a], [b]) => b.length - a.length);
  for (const [p, value] of values) text = text.split(p).join(JSON.stringify(value));
  return text;
}

describe('batch request builders', () => {
  it('1: queries the table by batch, after the summary sort key', () => {
    const plan = batchResultsRequest(batch);

    expect(plan.input.IndexName).toBeUndefined();
    expect(expand(plan, 'KeyConditionExpression')).toBe(`batch_id = "acme#B1" AND img_fprint > "${BATCH_SK}"`);
  });

  it('1: projects only listing attributes (no logs, no rek_resp)', () => {
    const projection = batchResultsRequest(batch).input.ProjectionExpression ?? '';

    expect(projection).toContain('#file_name');
    expect(projection).not.toMatch(/logs|rek_resp/);
  });

  it('2: queries LSI batch-status with a status prefix', () => {
    const plan = batchByStatusRequest({ ...batch, status: 'success' });

    expect(plan.input.IndexName).toBe(INDEX.batchStatus);
    expect(expand(plan, 'KeyConditionExpression')).toBe('batch_id = "acme#B1" AND begins_with(status_ts, "success#")');
  });

  it('2: a status with a time range becomes a status_ts range', () => {
    const plan = batchByStatusRequest({ ...batch, status: 'fail', from: 1000, to: 2000 });

    expect(expand(plan, 'KeyConditionExpression')).toBe(
      'batch_id = "acme#B1" AND status_ts BETWEEN "fail#000000000001000" AND "fail#000000000002000"',
    );
  });

  it('2: a status with only `from` runs to the end of that status', () => {
    const plan = batchByStatusRequest({ ...batch, status: 'fail', from: 1000 });

    expect(expand(plan, 'KeyConditionExpression')).toContain('"fail#000000000001000" AND "fail#999999999999999"');
  });

  it('7: queries LSI batch-time on upload_ts', () => {
    const plan = batchTimeRangeRequest({ ...batch, from: 1000, to: 2000 });

    expect(plan.input.IndexName).toBe(INDEX.batchTime);
    expect(expand(plan, 'KeyConditionExpression')).toBe('batch_id = "acme#B1" AND upload_ts BETWEEN 1000 AND 2000');
  });

  it('7: an open-ended range uses >= or <=', () => {
    expect(expand(batchTimeRangeRequest({ ...batch, from: 5 }), 'KeyConditionExpression')).toBe('batch_id = "acme#B1" AND upload_ts >= 5');
    expect(expand(batchTimeRangeRequest({ ...batch, to: 9 }), 'KeyConditionExpression')).toBe('batch_id = "acme#B1" AND upload_ts <= 9');
  });

  it("reads only the client's own partition of the batch name, filtering ttl", () => {
    for (const plan of [batchResultsRequest(batch), batchByStatusRequest({ ...batch, status: 'success' }), batchTimeRangeRequest(batch)]) {
      expect(expand(plan, 'KeyConditionExpression')).toMatch(/^batch_id = "acme#B1"/);
      expect(expand(plan, 'FilterExpression')).toBe(`ttl > ${NOW_S}`);
    }
  });

  it('4: queries the sparse LSI batch-logs, filtering ttl', () => {
    const plan = batchLogsRequest({ ...batch, from: 1 });

    expect(plan.input.IndexName).toBe(INDEX.batchLogs);
    expect(expand(plan, 'KeyConditionExpression')).toBe('batch_id = "acme#B1" AND log_ts >= 1');
    expect(expand(plan, 'FilterExpression')).toBe(`ttl > ${NOW_S}`);
  });

  it('chooses 2 for a status, 7 for a time range alone, 1 otherwise', () => {
    expect(batchImagesRequest({ ...batch, status: 'success', from: 1 }).pattern).toBe('batch-status');
    expect(batchImagesRequest({ ...batch, to: 1 }).pattern).toBe('batch-time');
    expect(batchImagesRequest(batch).pattern).toBe('batch-results');
  });

  it('reads images still in progress from the batch itself, since status keys come with the result', () => {
    const plan = batchImagesRequest({ ...batch, status: 'processing', from: 5 });

    expect(plan.pattern).toBe('batch-in-progress');
    expect(plan.input.IndexName).toBeUndefined();
    expect(expand(plan, 'FilterExpression')).toBe(`op_status = "processing" AND received_ts >= 5 AND ttl > ${NOW_S}`);
  });
});

describe('client request builders', () => {
  it('3: queries GSI client-status', () => {
    const plan = clientByStatusRequest({ ...client, status: 'fail' });

    expect(plan.input.IndexName).toBe(INDEX.clientStatus);
    expect(expand(plan, 'KeyConditionExpression')).toBe('client_id = "acme" AND begins_with(status_ts, "fail#")');
  });

  it('5b: queries GSI client-fprint for one fingerprint', () => {
    const plan = imageAcrossBatchesRequest({ ...client, fprint: 'abc' });

    expect(plan.input.IndexName).toBe(INDEX.clientFprint);
    expect(expand(plan, 'KeyConditionExpression')).toBe('client_id = "acme" AND img_fprint = "abc"');
  });

  it('5b: other filters become filter expressions', () => {
    const plan = imageAcrossBatchesRequest({ ...client, fprint: 'abc', status: 'success', cat: true, from: 1, to: 2 });

    expect(expand(plan, 'FilterExpression')).toBe(
      `op_status = "success" AND rek_iscat = true AND upload_ts BETWEEN 1 AND 2 AND ttl > ${NOW_S}`,
    );
  });

  it('8: queries GSI client-time on upload_ts', () => {
    const plan = clientTimeRangeRequest({ ...client, from: 10, to: 20 });

    expect(plan.input.IndexName).toBe(INDEX.clientTime);
    expect(expand(plan, 'KeyConditionExpression')).toBe('client_id = "acme" AND upload_ts BETWEEN 10 AND 20');
  });

  it('9: queries the sparse GSI client-cats on cat_ts', () => {
    const plan = clientCatsRequest({ ...client, from: 10 });

    expect(plan.input.IndexName).toBe(INDEX.clientCats);
    expect(expand(plan, 'KeyConditionExpression')).toBe('client_id = "acme" AND cat_ts >= 10');
    expect(expand(plan, 'FilterExpression')).toBe(`ttl > ${NOW_S}`);
  });

  it('cat=false on client-time filters classified non-cats', () => {
    expect(expand(clientTimeRangeRequest({ ...client, cat: false }), 'FilterExpression')).toBe(`rek_iscat = false AND ttl > ${NOW_S}`);
  });

  it('chooses 5b for a fingerprint, 9 for cats, 3 for a status, 8 otherwise', () => {
    expect(clientImagesRequest({ ...client, fprint: 'f', cat: true }).pattern).toBe('client-fprint');
    expect(clientImagesRequest({ ...client, cat: true, status: 'success' }).pattern).toBe('client-cats');
    expect(clientImagesRequest({ ...client, status: 'success' }).pattern).toBe('client-status');
    expect(clientImagesRequest({ ...client, cat: false }).pattern).toBe('client-time');
  });

  it('declares every attribute name it uses and no other (DynamoDB rejects unused names)', () => {
    const plans = [
      clientImagesRequest({ ...client }),
      clientImagesRequest({ ...client, cat: true }),
      clientImagesRequest({ ...client, status: 'fail', from: 1 }),
      clientImagesRequest({ ...client, fprint: 'x' }),
      batchLogsRequest({ ...batch, nowS: 1 }),
      clientBatchesRequest({ ...client, status: 'processing', from: 1 }),
      clientBatchesRequest({ ...client, status: 'open' }),
      clientBatchesRequest(client),
    ];
    for (const plan of plans) {
      const used = [plan.input.KeyConditionExpression, plan.input.FilterExpression, plan.input.ProjectionExpression].join(' ');
      for (const name of Object.keys(plan.input.ExpressionAttributeNames ?? {})) expect(used).toContain(name);
      for (const value of Object.keys(plan.input.ExpressionAttributeValues ?? {})) expect(used).toContain(value);
    }
  });
});

describe("a client's batches", () => {
  it('queries the sparse GSI client-batches by owner, newest first', () => {
    const plan = clientBatchesRequest({ ...client, from: 10, to: 20 });

    expect(plan.input.IndexName).toBe(INDEX.clientBatches);
    expect(plan.input.ScanIndexForward).toBe(false);
    expect(expand(plan, 'KeyConditionExpression')).toBe('owner_id = "acme" AND created_ts BETWEEN 10 AND 20');
  });

  it.each([
    ['open', '(attribute_not_exists(closed) OR closed = false)'],
    ['processing', 'closed = true AND attribute_not_exists(done_ts)'],
    ['done', 'attribute_exists(done_ts)'],
  ] as const)('filters %s batches on the fields that change once per batch', (status, filter) => {
    expect(expand(clientBatchesRequest({ ...client, status }), 'FilterExpression')).toBe(`${filter} AND ttl > ${NOW_S}`);
  });

  it('resumes after the index key and the table key', () => {
    expect(clientBatchesRequest(client).keyAttributes).toEqual(['owner_id', 'created_ts', 'batch_id', 'img_fprint']);
  });
});

describe('cursor scope', () => {
  it('is the same for the same query at another time', () => {
    expect(batchResultsRequest({ ...batch, nowS: 1 }).scope).toBe(batchResultsRequest({ ...batch, nowS: 2 }).scope);
  });

  it('differs by batch, client, index and filter', () => {
    const scopes = new Set([
      batchResultsRequest(batch).scope,
      batchResultsRequest({ ...batch, batchId: 'B2' }).scope,
      batchResultsRequest({ ...batch, clientId: 'other' }).scope,
      batchTimeRangeRequest(batch).scope,
      batchByStatusRequest({ ...batch, status: 'success' }).scope,
      batchByStatusRequest({ ...batch, status: 'fail' }).scope,
    ]);

    expect(scopes.size).toBe(6);
  });
});

describe('pageRequest', () => {
  it('adds Limit and ExclusiveStartKey', () => {
    const input = pageRequest(batchResultsRequest(batch), 21, { batch_id: 'acme#B1', img_fprint: 'f' });

    expect(input).toMatchObject({ Limit: 21, ExclusiveStartKey: { batch_id: 'acme#B1', img_fprint: 'f' } });
  });

  it('leaves ExclusiveStartKey out on the first page', () => {
    expect(pageRequest(batchResultsRequest(batch), 5)).not.toHaveProperty('ExclusiveStartKey');
  });
});

describe('startKeyAfter', () => {
  it('takes the index key and the table key from an item', () => {
    const plan = clientByStatusRequest({ ...client, status: 'success' });
    const item = { client_id: 'acme', status_ts: 'success#1', batch_id: 'B', img_fprint: 'f', file_name: 'x.jpg' };

    expect(startKeyAfter(plan, item)).toEqual({ client_id: 'acme', status_ts: 'success#1', batch_id: 'B', img_fprint: 'f' });
  });

  it('refuses an item without the index key', () => {
    expect(() => startKeyAfter(batchTimeRangeRequest(batch), { batch_id: 'B', img_fprint: 'f' })).toThrow(/upload_ts/);
  });
});

describe('key reads', () => {
  it('5: GetItem by batch and fingerprint with the listing projection', () => {
    const input = imageRequest(T, 'acme', 'B1', 'f1');

    expect(input.Key).toEqual({ batch_id: 'acme#B1', img_fprint: 'f1' });
    expect(input.ProjectionExpression).toContain('#op_status');
  });

  it('the summary is GetItem on the #BATCH sort key', () => {
    expect(batchSummaryRequest(T, 'acme', 'B1').Key).toEqual({ batch_id: 'acme#B1', img_fprint: BATCH_SK });
  });

  it('6: BatchGetItem takes at most 100 distinct keys per request', () => {
    const fprints = Array.from({ length: 250 }, (_, i) => `f${i}`);

    const requests = batchGetRequests(T, 'acme', 'B1', [...fprints, 'f0']);

    expect(requests.map((r) => r.RequestItems?.[T]?.Keys?.length)).toEqual([BATCH_GET_MAX_KEYS, BATCH_GET_MAX_KEYS, 50]);
  });

  it('6: never asks for the summary item', () => {
    const keys = batchGetRequests(T, 'acme', 'B1', ['a', BATCH_SK])[0]?.RequestItems?.[T]?.Keys;

    expect(keys).toEqual([{ batch_id: 'acme#B1', img_fprint: 'a' }]);
  });

  it('shows an item read by key only when it is an unexpired image', () => {
    const item = { batch_id: 'acme#B', img_fprint: 'f', op_status: 'success' as const, client_id: 'acme', ttl: NOW_S + 1 };

    expect(isVisibleImage(item, NOW_S)).toBe(true);
    expect(isVisibleImage({ ...item, ttl: NOW_S }, NOW_S)).toBe(false);
    expect(isVisibleImage({ ...item, img_fprint: BATCH_SK }, NOW_S)).toBe(false);
    expect(isVisibleImage(undefined, NOW_S)).toBe(false);
  });
});

describe('backoffDelay', () => {
  const opts = { attempts: 5, baseDelayMs: 10, maxDelayMs: 100 };

  it('grows exponentially under full jitter', () => {
    expect([0, 1, 2].map((round) => backoffDelay(round, opts, () => 0.999))).toEqual([9, 19, 39]);
  });

  it('is capped', () => {
    expect(backoffDelay(10, opts, () => 0.999)).toBe(99);
  });
});
