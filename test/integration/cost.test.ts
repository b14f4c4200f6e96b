// What a batch cost and what an upload will cost (docs/design.md "What a batch cost"): the summary's usage after a
// real ingest with a duplicate and a reuse, POST /v1/fingerprints:known answering only the caller's own images, the
// CLI's local fingerprint equal to the ingest's on every format the ingest reads, and the CLI's estimate and cost line.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { localFingerprint } from '../../lib/cli/estimate';
import { uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

/** The same kitten in every format the ingest reads (made here with sharp), and a JPEG that EXIF says to rotate. */
async function formatSamples(): Promise<[string, Buffer][]> {
  const png = fixture('chelsea.png');
  const small = sharp(png).resize(200);
  return [
    ['chelsea.png', png],
    ['rocket.jpg', fixture('rocket.jpg')],
    ['chelsea.webp', await small.clone().webp({ quality: 80 }).toBuffer()],
    ['chelsea.gif', await small.clone().gif().toBuffer()],
    ['chelsea.tiff', await small.clone().tiff().toBuffer()],
    ['chelsea.avif', await small.clone().avif({ quality: 60 }).toBuffer()],
    ['coffee-rotated.jpg', await sharp(fixture('coffee.png')).resize(160).jpeg().withMetadata({ orientation: 6 }).toBuffer()],
  ];
}

describe('cost and estimates', () => {
  let owner: TestClient;
  let other: TestClient;
  let work: string;
  const first = uniqueId('cost-a');
  const second = uniqueId('cost-b');
  let samples: [string, Buffer][];
  const fprintOf = new Map<string, string>();

  beforeAll(async () => {
    [owner, other] = await Promise.all([newClient('cost'), newClient('cost-other')]);
    work = mkdtempSync(path.join(tmpdir(), 'icecat-cost-'));
    samples = await formatSamples();
    for (const [name, bytes] of samples) await uploadFile(`uploads/${owner.clientId}/${first}/${name}`, bytes);
    await uploadFile(`uploads/${owner.clientId}/${first}/again/chelsea.png`, fixture('chelsea.png'));
    await waitForBridgeIdle();
    await call('POST', `/v1/batches/${first}:close`, { key: owner.key, body: {} });
    const images = await call('GET', `/v1/batches/${first}/images`, { key: owner.key, query: { limit: 100 } });
    for (const image of images.body.items) fprintOf.set(image.fileName, image.fprint);
    // A later batch of the same client with a known image: reused, not called.
    await uploadFile(`uploads/${owner.clientId}/${second}/chelsea.png`, fixture('chelsea.png'));
    await waitForBridgeIdle();
  }, 120_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('fingerprints every format locally exactly as the ingest did', async () => {
    const local: Record<string, string | undefined> = {};
    const ingested: Record<string, string | undefined> = {};
    for (const [name, bytes] of samples) {
      const file = path.join(work, name.replace(/\//g, '_'));
      writeFileSync(file, bytes);
      local[name] = await localFingerprint(file);
      ingested[name] = fprintOf.get(name);
    }

    expect(Object.values(ingested).every((f) => typeof f === 'string')).toBe(true);
    expect(local).toEqual(ingested);
  });

  it('says what the batch cost: a call per new image, the duplicate saved', async () => {
    const summary = await call('GET', `/v1/batches/${first}`, { key: owner.key });

    expect(summary.body.counts).toMatchObject({ total: 8, success: 7, duplicate: 1, reused: 0 });
    expect(summary.body.usage).toEqual({ detectLabelsCalls: 7, reused: 0, duplicates: 1, estimatedCostUsd: 0.007, savedUsd: 0.001 });
  });

  it('counts a reused image as saved, not called', async () => {
    const summary = await call('GET', `/v1/batches/${second}`, { key: owner.key });

    expect(summary.body.usage).toEqual({ detectLabelsCalls: 0, reused: 1, duplicates: 0, estimatedCostUsd: 0, savedUsd: 0.001 });
  });

  it("knows the client's own fingerprints, distinct, in the order asked", async () => {
    const chelsea = fprintOf.get('chelsea.png')!;
    const rocket = fprintOf.get('rocket.jpg')!;
    const unknown = 'f'.repeat(32);

    const answer = await call('POST', '/v1/fingerprints:known', { key: owner.key, body: { fprints: [unknown, rocket, chelsea, rocket] } });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ known: [rocket, chelsea], pricePerImageUsd: 0.001 });
  });

  it("answers another client's known fingerprint as unknown", async () => {
    const answer = await call('POST', '/v1/fingerprints:known', { key: other.key, body: { fprints: [fprintOf.get('chelsea.png')] } });

    expect(answer.status).toBe(200);
    expect(answer.body.known).toEqual([]);
  });

  it('refuses more than 1,000 fingerprints in one call with the error shape', async () => {
    const fprints = Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(32, '0'));

    const answer = await call('POST', '/v1/fingerprints:known', { key: owner.key, body: { fprints } });

    expect(answer.status).toBe(400);
    expect(answer.body.error).toEqual({ code: expect.any(String), message: expect.stringMatching(/fprints/) });
  });

  it('estimates an upload with --dry-run --json: images, distinct, known, new calls, dollars; nothing sent', async () => {
    const folder = path.join(work, 'trip');
    mkdirSync(path.join(folder, 'again'), { recursive: true });
    writeFileSync(path.join(folder, 'chelsea.png'), fixture('chelsea.png'));
    writeFileSync(path.join(folder, 'again', 'chelsea.png'), fixture('chelsea.png'));
    writeFileSync(path.join(folder, 'grass.png'), fixture('grass.png'));
    writeFileSync(path.join(folder, 'broken.jpg'), 'not a picture, named like one');
    const before = await call('GET', '/v1/batches', { key: owner.key });

    const run = await icecat(['upload', folder, '--dry-run', '--json'], owner.key);
    const text = await icecat(['upload', folder, '--dry-run'], owner.key);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).estimate).toEqual({ images: 3, distinct: 2, known: 1, newCalls: 1, estimatedCostUsd: 0.001 });
    expect(text.stdout.trim().split('\n').at(-1)).toBe('estimate: 3 images, 2 distinct, 1 already known, 1 new DetectLabels call: $0.001');
    expect((await call('GET', '/v1/batches', { key: owner.key })).body.items.length).toBe(before.body.items.length);
  });

  it('ends upload --wait with what the batch cost', async () => {
    const folder = path.join(work, 'waited');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'chelsea.png'), fixture('chelsea.png'));
    writeFileSync(path.join(folder, 'chelsea copy.png'), fixture('chelsea.png'));
    writeFileSync(path.join(folder, 'gravel.png'), fixture('gravel.png'));

    const run = await icecat(['upload', folder, '--wait'], owner.key);

    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('cost: 1 DetectLabels call, $0.001; 1 reused and 1 duplicate saved $0.002');
  }, 60_000);
});
