// Thumbnails end to end on the local stack: files go up through the presigned forms, the ingest stores a WebP of each
// image it decoded, the API answers presigned thumbnailUrl and imageUrl, which the local S3 serves over HTTP, and
// erasing the batch takes the thumbnails with it.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { type UploadForm } from '../../lib/api/schemas/batches';
import { type ImageAnswer, imageListSchema, imageSchema } from '../../lib/api/schemas/images';
import { aws, stackEnv, waitForBridgeIdle } from '../helpers';
import { call, newClient, postForm, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const CAT = fixture('chelsea.png');
const NOT_CAT = fixture('coffee.png');
const NOT_AN_IMAGE = Buffer.from('these bytes are no picture at all');

async function objectBytes(key: string): Promise<Buffer> {
  const out = await aws().s3.send(new GetObjectCommand({ Bucket: stackEnv('BUCKET_NAME'), Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: stackEnv('BUCKET_NAME'), Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

async function fetchBytes(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

let client: TestClient;
let batchId: string;
let tiny: Buffer;
let byName: Record<string, ImageAnswer>;
/** When the listing whose URLs the tests look at was asked for (epoch ms). */
let listedAt: number;

beforeAll(async () => {
  tiny = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#c33' } })
    .png()
    .toBuffer();
  client = await newClient('thumbs');
  const files = [
    { name: 'chelsea.png', contentType: 'image/png', body: CAT },
    { name: 'coffee.png', contentType: 'image/png', body: NOT_CAT },
    { name: 'chelsea again.png', contentType: 'image/png', body: CAT },
    { name: 'tiny.png', contentType: 'image/png', body: tiny },
    { name: 'broken.jpg', contentType: 'image/jpeg', body: NOT_AN_IMAGE },
  ];
  const created = await call('POST', '/v1/batches', {
    key: client.key,
    body: { files: files.map(({ name, contentType, body }) => ({ name, contentType, size: body.length })) },
  });
  batchId = created.body.batchId;
  const forms = created.body.uploads as UploadForm[];
  // One after another, so that the duplicate is the later upload.
  for (const [i, file] of files.entries()) {
    expect(await postForm(forms[i]!, file.body, file.contentType)).toBe(204);
    await waitForBridgeIdle({ timeoutMs: 60_000 });
  }
  listedAt = Date.now();
  const list = await call('GET', `/v1/batches/${batchId}/images`, { key: client.key });
  byName = Object.fromEntries(imageListSchema.parse(list.body).items.map((i): [string, ImageAnswer] => [i.fileName ?? '', i]));
}, 120_000);

const thumbnailKeyOf = (image: ImageAnswer) => `thumbnails/${client.clientId}/${batchId}/${image.fprint}.webp`;
/** The object key a presigned path-style URL of the local S3 names. */
const keyOfUrl = (url: string) => decodeURIComponent(new URL(url).pathname).replace(`/${stackEnv('BUCKET_NAME')}/`, '');

describe('thumbnails the ingest stores', () => {
  it('stores one per decoded image, none for the duplicate or the undecodable file', async () => {
    expect(Object.keys(byName).sort()).toEqual(['broken.jpg', 'chelsea.png', 'coffee.png', 'tiny.png']);
    expect(byName['chelsea.png']).toMatchObject({ status: 'success', isCat: true, duplicates: 1 });
    expect(byName['tiny.png']).toMatchObject({ status: 'fail', error: { code: 'ImageTooSmall' } });
    expect(byName['broken.jpg']).toMatchObject({ status: 'fail', error: { code: 'NotAnImage' } });

    const stored = await keysUnder(`thumbnails/${client.clientId}/${batchId}/`);
    expect(stored).toEqual(['chelsea.png', 'coffee.png', 'tiny.png'].map((n) => thumbnailKeyOf(byName[n]!)).sort());
  });

  it.each([
    ['chelsea.png', [451, 300]],
    ['coffee.png', [600, 400]],
    ['tiny.png', [60, 40]],
  ] as const)('%s: a WebP at most 256 px a side, of the image’s proportions', async (name, [width, height]) => {
    const bytes = await objectBytes(thumbnailKeyOf(byName[name]!));
    const meta = await sharp(bytes).metadata();
    const source = await sharp(name === 'tiny.png' ? tiny : fixture(name)).metadata();

    expect([source.width, source.height]).toEqual([width, height]);
    expect(meta.format).toBe('webp');
    expect(Math.max(meta.width!, meta.height!)).toBe(Math.min(256, Math.max(width, height)));
    expect(meta.width! / meta.height!).toBeCloseTo(width / height, 1);
  });
});

describe('the URLs the API answers', () => {
  it('points the image its duplicate repeats at its one thumbnail: the duplicate shows the original’s', async () => {
    const cat = byName['chelsea.png']!;

    expect(keyOfUrl(cat.thumbnailUrl!)).toBe(thumbnailKeyOf(cat));
    expect(keyOfUrl(cat.imageUrl!)).toBe(`processed/${client.clientId}/${batchId}/${cat.fprint}.png`);
    expect(await keysUnder(`duplicates/${client.clientId}/${batchId}/${cat.fprint}/`)).toEqual([
      `duplicates/${client.clientId}/${batchId}/${cat.fprint}/chelsea again.png`,
    ]);
  });

  it.each(['chelsea.png', 'coffee.png', 'tiny.png'])('serves %s’s thumbnail over HTTP: 200, the stored WebP', async (name) => {
    const image = byName[name]!;
    const got = await fetchBytes(image.thumbnailUrl!);

    expect([got.status, got.type]).toEqual([200, 'image/webp']);
    expect(got.bytes.equals(await objectBytes(thumbnailKeyOf(image)))).toBe(true);
  });

  it.each([
    ['chelsea.png', CAT],
    ['coffee.png', NOT_CAT],
  ] as const)('serves %s itself over HTTP: 200, the uploaded bytes', async (name, uploaded) => {
    const got = await fetchBytes(byName[name]!.imageUrl!);

    expect([got.status, got.type]).toEqual([200, 'image/png']);
    expect(got.bytes.equals(uploaded)).toBe(true);
  });

  it('answers null for what does not exist: no image URL for failures, no thumbnail for the undecodable file', () => {
    expect(byName['tiny.png']!.imageUrl).toBeNull();
    expect(byName['broken.jpg']).toMatchObject({ thumbnailUrl: null, imageUrl: null });
  });

  it('answers the same objects for one image and in images:batchGet', async () => {
    const cat = byName['chelsea.png']!;
    const one = imageSchema.parse((await call('GET', `/v1/batches/${batchId}/images/${cat.fprint}`, { key: client.key })).body);
    const got = await call('POST', `/v1/batches/${batchId}/images:batchGet`, { key: client.key, body: { fprints: [cat.fprint] } });

    for (const image of [one, got.body.items[0] as ImageAnswer]) {
      expect([keyOfUrl(image.thumbnailUrl!), keyOfUrl(image.imageUrl!)]).toEqual([keyOfUrl(cat.thumbnailUrl!), keyOfUrl(cat.imageUrl!)]);
    }
  });

  it('answers the same in listings served by an index: a batch filtered by status, the client-wide listing', async () => {
    const listed = async (path: string, query: Record<string, string>) =>
      imageListSchema.parse((await call('GET', path, { key: client.key, query })).body).items;
    const shown = (items: ImageAnswer[]) =>
      items.map((i) => [i.fileName, ...[i.thumbnailUrl, i.imageUrl].map((u) => (u === null ? null : keyOfUrl(u)))]).sort();
    const expected = (name: string) => [name, keyOfUrl(byName[name]!.thumbnailUrl!), keyOfUrl(byName[name]!.imageUrl!)];

    expect(shown(await listed(`/v1/batches/${batchId}/images`, { status: 'fail' }))).toEqual([
      ['broken.jpg', null, null],
      ['tiny.png', thumbnailKeyOf(byName['tiny.png']!), null],
    ]);
    expect(shown(await listed(`/v1/batches/${batchId}/images`, { status: 'success' }))).toEqual([
      expected('chelsea.png'),
      expected('coffee.png'),
    ]);
    expect(shown(await listed('/v1/images', { cat: 'true' }))).toEqual([expected('chelsea.png')]);
  });

  it('expire within an hour', () => {
    const params = new URL(byName['chelsea.png']!.thumbnailUrl!).searchParams;
    const expiresAt =
      Date.parse(params.get('X-Amz-Date')!.replace(/(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z/, '$1-$2-$3T$4:$5:$6Z')) +
      Number(params.get('X-Amz-Expires')) * 1000;

    // From when the URL was handed out, not from now: how long the tests before this one took does not matter.
    expect(expiresAt - listedAt).toBeGreaterThanOrEqual(15 * 60_000);
    expect(expiresAt - listedAt).toBeLessThanOrEqual(3600_000);
  });
});

describe('erasing the batch', () => {
  it('removes its thumbnails: none left, and their URLs answer 404', async () => {
    const url = byName['chelsea.png']!.thumbnailUrl!;

    expect((await call('DELETE', `/v1/batches/${batchId}`, { key: client.key })).status).toBe(202);

    expect(await keysUnder(`thumbnails/${client.clientId}/${batchId}/`)).toEqual([]);
    expect((await fetchBytes(url)).status).toBe(404);
  });
});
