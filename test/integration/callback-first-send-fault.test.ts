// Completion callbacks are delivered at least once: when the first send of a batch's callback to its queue fails
// (SQS unavailable, injected with aws-sdk-client-mock, the one fault the local stack cannot produce), the batch still
// owes it, GET /v1/batches/{batchId} says so, and the reconciliation sweep later queues it and the callbacks consumer
// delivers it, signed as any callback, to a real receiver on 127.0.0.1, once.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { createCallbacksHandler } from '../../functions/callbacks/app';
import { presentBatch } from '../../lib/api/present';
import { type Batch } from '../../lib/domain/batch';
import { DEFAULT_PRICE_PER_IMAGE_USD } from '../../lib/domain/pricing';
import { type JobQueue, LocalJobQueue, SqsJobQueue } from '../../lib/jobs/queue';
import { completionNotifier } from '../../lib/notify/completion';
import { verifySignature } from '../../lib/notify/signature';
import { type CallbackSweepLimits, sweepCallbacks } from '../../lib/reconcile/callbacks';
import { BatchStore } from '../../lib/store/batch-store';
import { CallbackRequeues } from '../../lib/store/callback/requeue';
import { aws, stackEnv, uniqueId } from '../helpers';
import { call, newClient } from '../helpers/api';

interface Received {
  signature: string;
  body: string;
}

const received: Received[] = [];
let server: http.Server;
let hookUrl: string;
const callbacksQueue = new LocalJobQueue('callbacks', { awaitImmediate: true });
const faultLog: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      received.push({ signature: String(req.headers['icecat-signature']), body: Buffer.concat(parts).toString() });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/icecat`;
  // The callbacks function's own handler consumes this file's local callbacks queue, as the stack's consumes its own.
  callbacksQueue.consumeWith(createCallbacksHandler({ callbacks: callbacksQueue }));
});

afterAll(async () => {
  callbacksQueue.consumeWith(undefined);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The ingest's (or the API's) store, whose completion hook sends to an SQS queue that answers every send with an error. */
function storeWithFailingCallbackQueue(): BatchStore {
  const sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' } });
  mockClient(sqs)
    .on(SendMessageCommand)
    .rejects(Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable' }));
  return new BatchStore({
    ddb: aws().ddb,
    tableName: stackEnv('TABLE_NAME'),
    transactions: stackEnv('DDB_TRANSACTIONS') === 'true',
    onDone: completionNotifier({
      callbacks: new SqsJobQueue(sqs, 'https://sqs.us-east-1.amazonaws.com/123456789000/callbacks'),
      present: (batch) => presentBatch(batch, DEFAULT_PRICE_PER_IMAGE_USD),
      log: (message) => faultLog.push(message),
    }),
  });
}

/**
 * The in-process callbacks queue, passing on the callbacks of one client's batches only: the sweeps below read the
 * whole shared table with their clock moved ahead, and must not deliver again the callbacks of batches that another
 * test file, running at the same time, is following.
 */
function callbacksOf(clientId: string): JobQueue {
  return {
    send: async (body, delaySeconds) => {
      if ((JSON.parse(body) as { clientId: string }).clientId === clientId) await callbacksQueue.send(body, delaySeconds);
    },
  };
}

const sweepDeps = (clientId: string, now?: () => number) => ({
  owed: new CallbackRequeues({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }),
  callbacks: callbacksOf(clientId),
  present: (batch: Batch) => presentBatch(batch, DEFAULT_PRICE_PER_IMAGE_USD),
  ...(now ? { now } : {}),
});
const limits: CallbackSweepLimits = { firstAttemptGraceMs: 60_000, retryGraceMs: 600_000, maxCallbacks: 500 };

describe('a completion callback whose first send to its queue fails (SQS unavailable, injected)', () => {
  it('is shown pending, then queued again by the sweep and delivered signed, once', async () => {
    // Arrange: a batch with a callback, closed with nothing in it, so the close makes it done.
    const client = await newClient('cb-lost');
    const batchId = uniqueId('cb-lost');
    const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId, callbackUrl: hookUrl } });
    expect(created.status).toBe(201);
    const secret = created.body.callbackSecret as string;
    const store = storeWithFailingCallbackQueue();

    // Act 1: the batch turns done, and the callback's first send fails.
    const closed = await store.close(client.clientId, batchId);
    const pending = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
    // Act 2: a sweep within the grace period leaves it alone; one after it queues it again.
    const early = await sweepCallbacks(sweepDeps(client.clientId), limits);
    const late = await sweepCallbacks(
      sweepDeps(client.clientId, () => Date.now() + limits.firstAttemptGraceMs + 1000),
      limits,
    );
    const shown = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
    const again = await sweepCallbacks(
      sweepDeps(client.clientId, () => Date.now() + limits.retryGraceMs * 2),
      limits,
    );

    // Assert
    expect(closed).toMatchObject({ closed: true, batch: { doneAt: expect.any(Number) } });
    expect(faultLog).toContain('completion callback not queued; the reconciliation sweep queues it again');
    expect(pending).toMatchObject({ status: 'done', callback: { url: hookUrl, status: 'pending', attempts: 0, deliveredAt: null } });
    expect(early.requeued).not.toContain(`${client.clientId}/${batchId}`);
    expect(late.requeued).toContain(`${client.clientId}/${batchId}`);
    const mine = received.filter((r) => (JSON.parse(r.body) as { batchId: string }).batchId === batchId);
    expect(mine).toHaveLength(1);
    expect(verifySignature(mine[0]!.signature, secret, mine[0]!.body)).toBe(true);
    expect(JSON.parse(mine[0]!.body)).toMatchObject({
      batchId,
      status: 'done',
      callbackUrl: hookUrl,
      callback: null,
      counts: { total: 0 },
    });
    expect(shown.callback).toMatchObject({
      url: hookUrl,
      status: 'delivered',
      attempts: 1,
      lastStatus: 200,
      deliveredAt: expect.any(String),
    });
    expect(again.requeued).not.toContain(`${client.clientId}/${batchId}`);
  });

  it('is not queued again while its attempts are still under way, nor for a batch being erased', async () => {
    // Arrange: two done batches owing their callback: one erased since, one whose attempt failed a moment ago.
    const client = await newClient('cb-busy');
    const store = storeWithFailingCallbackQueue();
    const [erased, retrying] = [uniqueId('cb-erased'), uniqueId('cb-retrying')];
    for (const batchId of [erased, retrying]) {
      expect((await call('POST', '/v1/batches', { key: client.key, body: { batchId, callbackUrl: hookUrl } })).status).toBe(201);
      await store.close(client.clientId, batchId);
    }
    expect((await call('DELETE', `/v1/batches/${erased}`, { key: client.key })).status).toBe(202);
    const { recordCallbackState } = await import('../../lib/store/callback/state');
    const failedAttempt = {
      url: hookUrl,
      attempts: 1,
      lastAttemptAt: Date.now(),
      lastStatus: 500,
      lastError: 'HTTP 500',
      deliveredAt: null,
      gaveUpAt: null,
      firstAttemptAt: Date.now(),
    };
    await recordCallbackState(aws().ddb, stackEnv('TABLE_NAME'), client.clientId, retrying, failedAttempt);

    // Act: past the first-attempt grace, within the retry grace.
    const result = await sweepCallbacks(
      sweepDeps(client.clientId, () => Date.now() + limits.firstAttemptGraceMs + 1000),
      limits,
    );

    // Assert
    expect(result.requeued.filter((b) => b.startsWith(`${client.clientId}/`))).toEqual([]);
    expect((await call('GET', `/v1/batches/${retrying}`, { key: client.key })).body.callback).toMatchObject({
      status: 'pending',
      attempts: 1,
    });
  });
});
