// One client's cost stays its own (issue 29, items 6 and 13): POST /v1/fingerprints:known answered by key lookups and
// charged to the rate limit by the fingerprints asked; reuse and `known` skip a batch marked for erasure.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { defaultClientLimits } from '../../functions/config';
import { BatchStore } from '../../lib/store/batch-store';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { knownFingerprints } from '../../lib/store/image/known';
import { cursorCodec } from '../../lib/store/table/cursor';
import type { StoreContext } from '../../lib/store/table/query';
import { aws, detectCalls, stackEnv, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, fprints, newClient, type TestClient } from '../helpers/api';

const chelsea = readFileSync(path.join(__dirname, '..', 'fixtures', 'chelsea.png'));

/** The stack's own DynamoDB client, with every command it sends named in `sent` (the calls go through unchanged). */
function countingContext(sent: string[]): StoreContext {
  const ddb = aws().ddb;
  const counting = Object.create(ddb) as DynamoDBDocumentClient;
  counting.send = ((command: { constructor: { name: string } }) => {
    sent.push(command.constructor.name);
    return (ddb.send as (c: unknown) => Promise<unknown>)(command);
  }) as DynamoDBDocumentClient['send'];
  return { ddb: counting, tableName: stackEnv('TABLE_NAME'), cursors: cursorCodec(stackEnv('CURSOR_SECRET')) };
}

async function imageOf(client: TestClient, batchId: string): Promise<{ fprint: string; reused?: boolean; status: string }> {
  const res = await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { limit: 10 } });
  expect(res.status).toBe(200);
  expect(res.body.items).toHaveLength(1);
  return res.body.items[0];
}

describe('fingerprints:known, by key', () => {
  let client: TestClient;
  let fprint: string;

  beforeAll(async () => {
    client = await newClient('kn');
    await uploadFile(`uploads/${client.clientId}/a/chelsea.png`, chelsea, 'image/png');
    await waitForBridgeIdle();
    fprint = (await imageOf(client, 'a')).fprint;
  }, 60_000);

  it('answers 300 fingerprints with BatchGetItem lookups, no index Query', async () => {
    const sent: string[] = [];
    const asked = [...fprints(299, 'e'), fprint];

    const known = await knownFingerprints(countingContext(sent), client.clientId, asked);

    expect(known).toEqual([fprint]);
    expect(sent.filter((name) => name === 'QueryCommand')).toEqual([]);
    // Three lookups of 100 keys and one read of the batch named.
    expect(sent.filter((name) => name === 'BatchGetCommand').length).toBeLessThanOrEqual(4);
  });

  it('charges the rate limit one token per 5 fingerprints asked', async () => {
    const slow = await newClient('kr');
    await new ClientQuotaStore({
      ddb: aws().ddb,
      tableName: stackEnv('TABLE_NAME'),
      defaults: defaultClientLimits(),
      cacheMs: 0,
    }).setLimits(slow.clientId, {
      ratePerSecond: 1,
    });
    const many = fprints(1000, 'd');

    const first = await call('POST', '/v1/fingerprints:known', { key: slow.key, body: { fprints: many } });
    const next = await call('POST', '/v1/fingerprints:known', { key: slow.key, body: { fprints: [fprint] } });

    // A full bucket (burst 2) admits the first, which leaves the client 198 tokens in debt: about 199 s at 1 a second.
    expect(first.status).toBe(200);
    expect(next.status).toBe(429);
    expect(next.body.error.code).toBe('rate_limited');
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(150);
  });
});

describe('a batch marked for erasure', () => {
  it('is neither reused by the ingest nor answered by fingerprints:known', async () => {
    const client = await newClient('ke');
    await uploadFile(`uploads/${client.clientId}/first/chelsea.png`, chelsea, 'image/png');
    await waitForBridgeIdle();
    const { fprint } = await imageOf(client, 'first');
    const known = async () => (await call('POST', '/v1/fingerprints:known', { key: client.key, body: { fprints: [fprint] } })).body.known;
    expect(await known()).toEqual([fprint]);

    // What DELETE /v1/batches/first does before it answers 202; the erasure itself runs later.
    const store = new BatchStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), transactions: false });
    expect(await store.markDeleting(client.clientId, 'first')).toMatchObject({ deleting: true });
    const knownWhileErased = await known();
    const calls = await detectCalls();
    await uploadFile(`uploads/${client.clientId}/second/chelsea.png`, chelsea, 'image/png');
    await waitForBridgeIdle();

    expect(knownWhileErased).toEqual([]);
    expect(await detectCalls()).toBe(calls + 1);
    expect(await imageOf(client, 'second')).toMatchObject({ fprint, status: 'success', reused: false });
    expect(await known()).toEqual([fprint]);
  }, 60_000);
});
