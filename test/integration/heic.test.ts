// Phone photos through the local stack (docs/design.md §12): heif-enc's HEICs and a grid HEIC are classified exactly
// as the photos they were made from (the same cat verdicts, the capture time of their EXIF, a WebP thumbnail, one
// near-duplicate group with the JPEG), a PDF and a video renamed .jpg fail UnsupportedFormat, and the worst HEIF
// fails with its own code while the stack goes on classifying.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import type { ImageAnswer } from '../../lib/api/schemas/images';
import type { SimilarGroups } from '../../lib/api/schemas/similar';
import { aws, stackEnv, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, readAllPages, type TestClient } from '../helpers/api';
import { codedTile, gridHeif } from '../helpers/heif-builder';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const BATCH = 'phone-photos';
let client: TestClient;
let byName: Record<string, ImageAnswer>;

async function upload(files: Record<string, Buffer>): Promise<void> {
  for (const [name, body] of Object.entries(files)) await uploadFile(`uploads/${client.clientId}/${BATCH}/${name}`, body);
  await waitForBridgeIdle({ timeoutMs: 120_000 });
}

beforeAll(async () => {
  client = await newClient('heic');
  const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId: BATCH } });
  if (created.status !== 201) throw new Error(`POST /v1/batches answered ${created.status}`);
  const tile = codedTile(fixture('chelsea.heic'));
  await upload({
    'chelsea.png': fixture('chelsea.png'),
    'coffee.png': fixture('coffee.png'),
    'phone/chelsea.jpg': fixture('chelsea-phone.jpg'),
    'phone/chelsea.heic': fixture('chelsea.heic'),
    'phone/chelsea-grid.heic': fixture('chelsea-grid.heic'),
    'phone/coffee.heic': fixture('coffee.heic'),
    'renamed/report.jpg': Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'),
    'renamed/clip.jpg': Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypisom\0\0\x02\0isomiso2', 'latin1'), Buffer.alloc(256)]),
    // The worst HEIF: a 100,000 px square grid of two tiles.
    'worst/huge-grid.heic': gridHeif({ tiles: [tile, tile], rows: 1, columns: 2, outputWidth: 100_000, outputHeight: 100_000 }),
    'worst/lying-grid.heic': gridHeif({
      tiles: [tile, tile],
      rows: 16,
      columns: 16,
      outputWidth: tile.width * 2,
      outputHeight: tile.height,
    }),
  });
  // Uploaded after the worst ones: the stack still classifies.
  await upload({ 'after/coffee-small.jpg': await sharp(fixture('coffee-phone.jpg')).resize(300).jpeg().toBuffer() });
  await call('POST', `/v1/batches/${BATCH}:close`, { key: client.key });
  const images = await readAllPages<ImageAnswer>(`/v1/batches/${BATCH}/images`, client.key);
  byName = Object.fromEntries(images.items.map((i) => [i.fileName, i]));
}, 240_000);

describe('HEIC photos through the stack', () => {
  it('classifies each HEIC as the photo it was made from: the same cat verdict', () => {
    const verdict = (name: string) => [byName[name]?.status, byName[name]?.isCat];
    expect(verdict('phone/chelsea.heic')).toEqual(verdict('chelsea.png'));
    expect(verdict('phone/chelsea-grid.heic')).toEqual(verdict('chelsea.png'));
    expect(verdict('phone/coffee.heic')).toEqual(verdict('coffee.png'));
    expect([verdict('chelsea.png'), verdict('coffee.png')]).toEqual([
      ['success', true],
      ['success', false],
    ]);
  });

  it('reads the capture time and camera from their EXIF, as from the JPEG', () => {
    for (const name of ['phone/chelsea.jpg', 'phone/chelsea.heic', 'phone/chelsea-grid.heic']) {
      expect([name, byName[name]?.capturedAt, byName[name]?.camera]).toEqual([name, '2024-06-01T06:30:00+02:00', 'Apple iPhone 12']);
    }
    expect(byName['phone/coffee.heic']?.capturedAt).toBe('2024-06-02T08:15:00+02:00');
  });

  it('stores a WebP thumbnail of each HEIC, upright', async () => {
    for (const name of ['phone/chelsea.heic', 'phone/chelsea-grid.heic']) {
      const image = byName[name]!;
      const out = await aws().s3.send(
        new GetObjectCommand({ Bucket: stackEnv('BUCKET_NAME'), Key: `thumbnails/${client.clientId}/${BATCH}/${image.fprint}.webp` }),
      );
      const meta = await sharp(Buffer.from(await out.Body!.transformToByteArray())).metadata();
      expect([name, meta.format, meta.width, meta.height]).toEqual([name, 'webp', 256, 170]);
    }
  });

  it('groups the HEICs with the JPEG and the PNG they came from', async () => {
    const { groups } = (await call<SimilarGroups>('GET', `/v1/batches/${BATCH}/similar`, { key: client.key })).body;
    const named = groups.map((g) => [...(g.fileNames as string[])].sort());
    expect(named).toContainEqual(['chelsea.png', 'phone/chelsea-grid.heic', 'phone/chelsea.heic', 'phone/chelsea.jpg']);
  });

  it('fails a PDF and a video renamed .jpg as UnsupportedFormat, saying what they are', () => {
    expect(byName['renamed/report.jpg']).toMatchObject({
      status: 'fail',
      error: { code: 'UnsupportedFormat', message: expect.stringContaining('a PDF document') },
    });
    expect(byName['renamed/clip.jpg']).toMatchObject({
      status: 'fail',
      error: { code: 'UnsupportedFormat', message: expect.stringContaining('a video') },
    });
  });

  it('fails the worst HEIFs with their own codes, and classifies what comes after them', () => {
    expect(byName['worst/huge-grid.heic']).toMatchObject({ status: 'fail', error: { code: 'TooManyPixels' } });
    expect(byName['worst/lying-grid.heic']).toMatchObject({ status: 'fail', error: { code: 'CorruptImage' } });
    expect(byName['after/coffee-small.jpg']?.status).toBe('success');
  });
});
