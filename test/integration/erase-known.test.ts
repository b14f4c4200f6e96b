// Erasure leaves nothing that names the batch (issue 37 item 7): after DELETE /v1/batches/{id} has run, no item of the
// table names it — neither its records, summary and uploads' items, nor the known-fingerprint item
// (`KNOWN#{client}#…`, known_in) its classified image wrote for POST /v1/fingerprints:known.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { aws, stackEnv, uniqueId, uploadFile, waitFor } from '../helpers';
import { call, newClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

/** Every item of the table that names the client's batch: by its key, or as the batch its answer came from. */
async function itemsNaming(clientId: string, batchId: string): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await aws().ddb.send(
      new ScanCommand({
        TableName: stackEnv('TABLE_NAME'),
        FilterExpression: 'contains(batch_id, :partition) OR (begins_with(batch_id, :known) AND known_in = :batch)',
        ExpressionAttributeValues: { ':partition': `${clientId}#${batchId}`, ':known': `KNOWN#${clientId}#`, ':batch': batchId },
        ExclusiveStartKey: start,
      }),
    );
    found.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return found;
}

describe('DELETE /v1/batches/{batchId}', () => {
  it('leaves no item naming the batch, its known-fingerprint items included', async () => {
    // Arrange: one classified image, which wrote its known-fingerprint item; another batch of the client stays.
    const client = await newClient('erase-known');
    const batchId = uniqueId('ek');
    await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId, files: [{ name: 'chelsea.png', contentType: 'image/png', size: 1_000_000 }] },
    });
    await uploadFile(`uploads/${client.clientId}/${batchId}/chelsea.png`, fixture('chelsea.png'), 'image/png');
    await waitFor(async () => (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body?.status === 'done', {
      timeoutMs: 60_000,
      what: 'the batch done',
    });
    const before = await itemsNaming(client.clientId, batchId);
    expect(before.some((i) => String(i.batch_id).startsWith('KNOWN#'))).toBe(true);

    // Act
    const erased = await call('DELETE', `/v1/batches/${batchId}`, { key: client.key });
    await waitFor(async () => (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).status === 404, {
      what: 'the batch gone',
    });

    // Assert
    expect(erased.status).toBeLessThan(300);
    expect(await itemsNaming(client.clientId, batchId)).toEqual([]);
  }, 90_000);
});
