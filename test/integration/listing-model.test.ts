// A listing's image names its model (issue 37 item 9; docs/design.md §13: every answer names its model): every listing
// of images, read from the table or from an index that cannot project them (status, time range, a client's images by
// status, time or cat), carries `model`, `previous` and `audit` as the image read by key does. The records are seeded
// as the ingest, a re-detection and an audit draw leave them.
import { toStoredAudit } from '../../lib/store/table/schema';
import { call, imageItem, newClient, seedBatch, writeItems } from '../helpers/api';

const MODEL = { name: 'rekognition-detect-labels', version: '3.0' };
const OLDER = { name: 'rekognition-detect-labels', version: '2.0' };

describe('GET /v1/batches/{batchId}/images', () => {
  it('names the same model, previous answer and audit draw as the image read by key', async () => {
    // Arrange
    const client = await newClient('list-model');
    const now = Date.now();
    const batchId = await seedBatch(client.clientId, [], { closed: true, done_ts: now, n_total: 1, n_success: 1, n_pending: 0 });
    const fprint = 'lm00001';
    await writeItems([
      {
        ...imageItem(client.clientId, batchId, { fprint, uploadTs: now - 1_000, isCat: true, catConfidence: 91.5 }),
        rek_model: MODEL,
        prev: { model: OLDER, cat: false, conf: 12 },
        audit: toStoredAudit({ drawnAt: now, stratum: 'cat', order: '00000000abcd', seed: 7 }),
      },
    ]);

    // Act
    const byKey = (await call('GET', `/v1/batches/${batchId}/images/${fprint}`, { key: client.key })).body;
    const listed = (await call('GET', `/v1/batches/${batchId}/images`, { key: client.key })).body.items;
    const byCapture = (await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { order: 'captured' } })).body;
    const fromIndexes = {
      'batch by status': { path: `/v1/batches/${batchId}/images`, query: { status: 'success' } },
      'batch by time': { path: `/v1/batches/${batchId}/images`, query: { from: new Date(now - 60_000).toISOString() } },
      'client by status': { path: '/v1/images', query: { status: 'success' } },
      'client by time': { path: '/v1/images', query: { from: new Date(now - 60_000).toISOString() } },
      'client cats': { path: '/v1/images', query: { cat: 'true' } },
    };
    const indexed: Record<string, unknown> = {};
    for (const [name, { path, query }] of Object.entries(fromIndexes)) {
      const res = await call('GET', path, { key: client.key, query });
      expect(res.status).toBe(200);
      const [image, ...more] = res.body.items;
      expect(more).toEqual([]);
      indexed[name] = { model: image?.model, previous: image?.previous, audit: image?.audit };
    }

    // Assert
    expect(byKey).toMatchObject({ model: MODEL, previous: { model: OLDER, isCat: false, catConfidence: 12 }, audit: { stratum: 'cat' } });
    expect(listed).toHaveLength(1);
    expect({ model: listed[0].model, previous: listed[0].previous, audit: listed[0].audit }).toEqual({
      model: byKey.model,
      previous: byKey.previous,
      audit: byKey.audit,
    });
    expect(byCapture.items).toEqual([]);
    const answer = { model: byKey.model, previous: byKey.previous, audit: byKey.audit };
    expect(indexed).toEqual(Object.fromEntries(Object.keys(fromIndexes).map((name) => [name, answer])));
  });
});
