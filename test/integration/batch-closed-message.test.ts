// A claim refused because its batch was closed meanwhile says so once, naming the batch (issue 29, item 15): the
// refusal of the transaction's guard (DynamoDB Local, AWS) and of the two-write path (dynalite) read the same.
import { randomUUID } from 'node:crypto';
import { BatchClosedError } from '../../lib/errors';
import { BatchStore } from '../../lib/store/batch-store';
import { aws, stackEnv } from '../helpers';
import { call, newClient } from '../helpers/api';

test('a claim into a batch closed meanwhile is refused with a message that names the batch once', async () => {
  const client = await newClient('closed');
  const batchId = (await call('POST', '/v1/batches', { key: client.key, body: {} })).body.batchId as string;
  expect((await call('POST', `/v1/batches/${batchId}:close`, { key: client.key })).status).toBe(200);
  const store = new BatchStore({
    ddb: aws().ddb,
    tableName: stackEnv('TABLE_NAME'),
    transactions: process.env.DDB_TRANSACTIONS === 'true',
  });
  const seen = await store.getBatch(client.clientId, batchId);
  const now = Date.now();
  const claim = {
    clientId: client.clientId,
    batchId,
    fprint: 'a'.repeat(32),
    claimId: randomUUID(),
    key: `uploads/${client.clientId}/${batchId}/late.png`,
    fileName: 'late.png',
    phash: '0'.repeat(16),
    format: 'png',
    width: 100,
    height: 100,
    now,
    leaseMs: 30_000,
    expiresAt: Math.floor(now / 1000) + 86_400,
  };

  const refused = await store.claim(claim, { seen }).then(
    () => undefined,
    (err: unknown) => err,
  );

  expect(refused).toBeInstanceOf(BatchClosedError);
  expect((refused as BatchClosedError).message).toBe(`batch ${batchId} was closed before this upload was counted`);
});
