// Model versions on every answer (docs/decisions/0031-model-versions.md): the stack records its detector's model as
// the one answering now; each record, the summary's `models` and the exports name the model; pixels answered by another
// model are classified again, not reused, and fingerprints:known does not count them; a record written before records
// kept their model reads as the model of its time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ModelVersion } from '../../lib/domain/detection';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { readCurrentModel } from '../../lib/store/model/current';
import { recordCurrentModel } from '../../lib/store/model/current-write';
import { batchPartition, knownItemKey } from '../../lib/store/table/schema';
import { MODEL_LABEL } from '../../local/detector/model-catalog';
import { MODEL_SCALES } from '../../local/detector/scales';
import { aws, detectCalls, stackEnv, uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, seedBatch, type TestClient, writeItems } from '../helpers/api';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const store = () => ({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') });
const LOCAL_NOW = { name: MODEL_LABEL.centernet, version: `3.3.6+mapping.${MODEL_SCALES.centernet.mappingVersion}` };
/** The same model on the scale before 2026-11-25 16:30:06 UTC, as a restart with that mapping would answer. */
const EARLIER_MAPPING: ModelVersion = { name: 'centernet-mobilenetv3-coco80', version: '3.3.6+mapping.1' };
/** On the scale from then until each label had its own (local/detector/scales.ts). */
const MAPPING_2: ModelVersion = { name: 'centernet-mobilenetv3-coco80', version: '3.3.6+mapping.2' };

async function classifiedBatch(client: TestClient, batchId: string, files: string[]): Promise<void> {
  for (const name of files) await uploadFile(`uploads/${client.clientId}/${batchId}/${name}`, fixture(name));
  await waitForBridgeIdle();
  await call('POST', `/v1/batches/${batchId}:close`, { key: client.key, body: {} });
}

const exported = async (client: TestClient, batchId: string, format: string): Promise<string> => {
  const res = await fetch(`${stackEnv('ICECAT_API_URL')}/v1/batches/${batchId}/export?format=${format}`, {
    headers: { authorization: `Bearer ${client.key}` },
  });
  return res.text();
};

describe('model versions', () => {
  let client: TestClient;
  const first = uniqueId('mv-a');

  beforeAll(async () => {
    client = await newClient('mv');
    await classifiedBatch(client, first, ['chelsea.png', 'coffee.png']);
  }, 120_000);

  // Whatever a test switched to, the detector's model answers now again for the tests after these.
  afterAll(() => recordCurrentModel(store(), LOCAL_NOW, Date.now()));

  it("records the detector's model, learnt from its answer at the stack's start, as the one answering now", async () => {
    expect(await readCurrentModel(store())).toEqual(LOCAL_NOW);
  });

  it('names the model on each image, counts the models in the summary, and the exports name it', async () => {
    const summary = await call('GET', `/v1/batches/${first}`, { key: client.key });
    const csv = (await exported(client, first, 'csv')).split('\r\n').filter(Boolean);
    const megadetector = JSON.parse(await exported(client, first, 'megadetector')) as { info: { detector: string } };

    expect(summary.body.models).toEqual([{ ...LOCAL_NOW, images: 2 }]);
    expect(csv[0]!.endsWith(',model')).toBe(true);
    expect(csv.slice(1).map((line) => line.split(',').at(-1))).toEqual([
      `centernet-mobilenetv3-coco80@${LOCAL_NOW.version}`,
      `centernet-mobilenetv3-coco80@${LOCAL_NOW.version}`,
    ]);
    expect(megadetector.info.detector).toBe(`centernet-mobilenetv3-coco80 ${LOCAL_NOW.version}`);
  });

  it('classifies the same pixels again after a model switch, not reused, and learns the model back from the answer', async () => {
    const list = await call('GET', `/v1/batches/${first}/images`, { key: client.key });
    const fprint = (list.body.items as { fileName: string; fprint: string }[]).find((i) => i.fileName === 'chelsea.png')!.fprint;
    const known = async () => (await call('POST', '/v1/fingerprints:known', { key: client.key, body: { fprints: [fprint] } })).body.known;
    expect(await known()).toEqual([fprint]);

    await recordCurrentModel(store(), EARLIER_MAPPING, Date.now());
    expect(await known()).toEqual([]);
    const calls = await detectCalls();
    const second = uniqueId('mv-b');
    await classifiedBatch(client, second, ['chelsea.png']);
    const summary = await call('GET', `/v1/batches/${second}`, { key: client.key });

    expect(summary.body.counts).toMatchObject({ success: 1, reused: 0 });
    expect((await detectCalls()) - calls).toBe(1);
    expect(summary.body.models).toEqual([{ ...LOCAL_NOW, images: 1 }]);
    expect(await readCurrentModel(store())).toEqual(LOCAL_NOW);
    expect(await known()).toEqual([fprint]);

    const third = uniqueId('mv-c');
    await classifiedBatch(client, third, ['chelsea.png']);
    expect((await call('GET', `/v1/batches/${third}`, { key: client.key })).body.counts).toMatchObject({ success: 1, reused: 1 });
  }, 120_000);

  it('reads records written before records kept their model as the model of their time, counted only while their model answers', async () => {
    const [rocket, brick] = (await Promise.all(
      ['rocket.jpg', 'brick.png'].map(async (name) => (await fingerprint(fixture(name), { maxInputPixels: 100_000_000 })).fprint),
    )) as [string, string];
    // As the ingest wrote them before records kept their model: the local detector's legacy string in the boxes, the
    // rocket classified before the mapping changed (2026-11-25 16:30:06 UTC), the brick after.
    const legacy = await seedBatch(client.clientId, [], {
      batchId: uniqueId('mv-old'),
      closed: true,
      done_ts: Date.now(),
      n_total: 2,
      n_success: 2,
    } as never);
    const legacyRecord = (fprint: string, classifiedAt: number) => ({
      batch_id: batchPartition(client.clientId, legacy),
      img_fprint: fprint,
      client_id: client.clientId,
      op_status: 'success',
      status_ts: `success#${String(classifiedAt).padStart(15, '0')}`,
      upload_ts: classifiedAt,
      rek_ts: classifiedAt,
      rek_iscat: false,
      cat_conf: 0,
      rek_cats: [],
      ttl: Math.floor(Date.now() / 1000) + 86_400,
      labels: [{ name: 'Cup', confidence: 40 }],
      rek_dets: JSON.stringify({ m: 'centernet-mobilenetv3-coco80 (@vladmandic/human 3.3.6, local)', b: [] }),
    });
    // Their known items too, written before those named the model.
    const knownItem = (fprint: string) => ({
      ...knownItemKey(client.clientId, fprint),
      known_in: legacy,
      ttl: Math.floor(Date.now() / 1000) + 86_400,
    });
    await writeItems([
      legacyRecord(rocket, Date.parse('2026-11-24T12:00:00Z')),
      legacyRecord(brick, Date.parse('2026-11-26T12:00:00Z')),
      knownItem(rocket),
      knownItem(brick),
    ]);

    const summary = await call('GET', `/v1/batches/${legacy}`, { key: client.key });
    // While the model of 2026-11-26 answers, its records count as known; the earlier one's do not.
    await recordCurrentModel(store(), MAPPING_2, Date.now());
    const knownThen = await call('POST', '/v1/fingerprints:known', { key: client.key, body: { fprints: [rocket, brick] } });
    // Under the model answering now, neither: both are classified again.
    await recordCurrentModel(store(), LOCAL_NOW, Date.now());
    const knownNow = await call('POST', '/v1/fingerprints:known', { key: client.key, body: { fprints: [rocket, brick] } });
    const calls = await detectCalls();
    const later = uniqueId('mv-new');
    await classifiedBatch(client, later, ['rocket.jpg', 'brick.png']);
    const images = (await call('GET', `/v1/batches/${later}/images`, { key: client.key })).body.items as {
      fileName: string;
      reused: boolean;
    }[];

    expect(summary.body.models).toEqual([
      { ...EARLIER_MAPPING, images: 1 },
      { ...MAPPING_2, images: 1 },
    ]);
    expect(knownThen.body.known).toEqual([brick]);
    expect(knownNow.body.known).toEqual([]);
    expect(Object.fromEntries(images.map((i) => [i.fileName, i.reused]))).toEqual({ 'rocket.jpg': false, 'brick.png': false });
    expect((await detectCalls()) - calls).toBe(2);
  }, 120_000);
});
