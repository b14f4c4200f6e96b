// GET /v1/batches/{batchId}/similar against the local stack: real uploads fingerprinted by the ingest, grouped by
// their perceptual hashes. A photo, its re-encoding and its resize group; its mirror, other photos and flat images
// do not. Also the duplicate file names an image carries (duplicateFiles), through every listing that shows images.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { type ImageAnswer } from '../../lib/api/schemas/images';
import { type SimilarGroups, similarGroupsSchema } from '../../lib/api/schemas/similar';
import { MAX_DISTANCE_LIMIT } from '../../lib/similar/groups';
import { uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, readAllPages, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

let client: TestClient;
const BATCH = 'near-dupes';

async function upload(files: Record<string, Buffer>): Promise<void> {
  for (const [name, body] of Object.entries(files)) await uploadFile(`uploads/${client.clientId}/${BATCH}/${name}`, body);
  await waitForBridgeIdle({ timeoutMs: 90_000 });
}

const similar = (query: Record<string, string> = {}, key = client.key, batchId = BATCH) =>
  call<SimilarGroups>('GET', `/v1/batches/${batchId}/similar`, { key, query });

/** Each group as its sorted file names. */
const named = (answer: SimilarGroups): string[][] => answer.groups.map((g) => [...(g.fileNames as string[])].sort());

let whileOpen: SimilarGroups;

beforeAll(async () => {
  client = await newClient('similar');
  const chelsea = fixture('chelsea.png');
  const { width } = await sharp(chelsea).metadata();
  const solid = (background: { r: number; g: number; b: number }) =>
    sharp({ create: { width: 320, height: 240, channels: 3, background } });

  const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId: BATCH } });
  if (created.status !== 201) throw new Error(`POST /v1/batches answered ${created.status}`);
  // First the photo and its re-encoding alone, with the batch still open: the answer covers what is recorded so far.
  await upload({
    'chelsea.png': chelsea,
    'chelsea-q60.jpg': await sharp(chelsea).jpeg({ quality: 60 }).toBuffer(),
  });
  whileOpen = (await similar()).body;
  await upload({
    'small/chelsea-half.png': await sharp(chelsea)
      .resize(Math.round((width as number) / 2))
      .png()
      .toBuffer(),
    'chelsea-mirror.png': await sharp(chelsea).flop().png().toBuffer(),
    'coffee.png': fixture('coffee.png'),
    'astronaut.png': fixture('astronaut.png'),
    'rocket.jpg': fixture('rocket.jpg'),
    'grey.png': await solid({ r: 128, g: 128, b: 128 }).png().toBuffer(),
    'red.jpg': await solid({ r: 220, g: 30, b: 30 }).jpeg({ quality: 60 }).toBuffer(),
    // The very pixels of chelsea.png again: a duplicate, not another image.
    'copies/chelsea.png': chelsea,
  });
  const closed = await call('POST', `/v1/batches/${BATCH}:close`, { key: client.key });
  if (closed.body.status !== 'done') throw new Error(`the batch is ${closed.body.status} after close`);
}, 180_000);

describe('GET /v1/batches/{batchId}/similar', () => {
  it('answers an open batch over the images recorded so far', () => {
    expect(named(whileOpen)).toEqual([['chelsea-q60.jpg', 'chelsea.png']]);
  });

  it('groups the photo with its re-encoding and its resize, and nothing else, at the default 10 bits', async () => {
    const res = await similar();

    expect(res.status).toBe(200);
    const answer = similarGroupsSchema.parse(res.body);
    expect(named(answer)).toEqual([['chelsea-q60.jpg', 'chelsea.png', 'small/chelsea-half.png']]);
    expect(answer.groups[0]!.maxDistance).toBeGreaterThanOrEqual(0);
    expect(answer.groups[0]!.maxDistance).toBeLessThanOrEqual(10);
  });

  it("names each group's images by the files they were uploaded as", async () => {
    const images = await readAllPages<ImageAnswer>(`/v1/batches/${BATCH}/images`, client.key);
    const nameOf = new Map(images.items.map((i) => [i.fprint, i.fileName]));

    const { groups } = (await similar({ maxDistance: String(MAX_DISTANCE_LIMIT) })).body;

    expect(groups.map((g) => g.fprints.map((f) => nameOf.get(f)))).toEqual(groups.map((g) => g.fileNames));
  });

  it('never groups the flat images, even at the largest distance it takes', async () => {
    const res = await similar({ maxDistance: String(MAX_DISTANCE_LIMIT) });

    expect(res.status).toBe(200);
    const names = named(res.body).flat();
    expect(names).toEqual(expect.arrayContaining(['chelsea-q60.jpg', 'chelsea.png', 'small/chelsea-half.png']));
    expect(names.filter((n) => ['grey.png', 'red.jpg'].includes(n))).toEqual([]);
  });

  it('holds every group within the distance asked, at 0 and 5 bits too', async () => {
    const trio = ['chelsea-q60.jpg', 'chelsea.png', 'small/chelsea-half.png'];
    for (const maxDistance of [0, 5]) {
      const { groups } = (await similar({ maxDistance: String(maxDistance) })).body;

      expect(groups.every((g) => g.maxDistance <= maxDistance)).toBe(true);
      expect(trio).toEqual(expect.arrayContaining(groups.flatMap((g) => g.fileNames)));
    }
  });

  it.each(['25', '64', '65', '-1', 'abc', '2.5'])(
    'answers 400 invalid_parameter to maxDistance=%s (the largest taken is 24)',
    async (maxDistance) => {
      const res = await similar({ maxDistance });

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'invalid_parameter', message: 'maxDistance: must be a whole number of bits from 0 to 24' },
      });
    },
  );

  it("answers another client's batch 404, exactly as a batch that does not exist", async () => {
    const other = await newClient('similar-other');

    const foreign = await similar({}, other.key);
    const unknown = await similar({}, client.key, 'no-such-batch');

    expect(foreign).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: `batch ${BATCH} not found` } } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: 'batch no-such-batch not found' } } });
  });
});

describe("an image's duplicateFiles", () => {
  const original = (items: ImageAnswer[]) => items.find((i) => i.fileName === 'chelsea.png');

  it('lists the later upload of the same pixels on the original, in the batch listing, by status and by time', async () => {
    const all = await readAllPages<ImageAnswer>(`/v1/batches/${BATCH}/images`, client.key);
    const bySuccess = await readAllPages<ImageAnswer>(`/v1/batches/${BATCH}/images`, client.key, { status: 'success' });
    const byTime = await readAllPages<ImageAnswer>(`/v1/batches/${BATCH}/images`, client.key, { from: '0' });

    for (const items of [all.items, bySuccess.items, byTime.items]) {
      expect(original(items)).toMatchObject({ duplicates: 1, duplicateFiles: ['copies/chelsea.png'] });
    }
    expect(all.items.filter((i) => i.fileName !== 'chelsea.png').every((i) => i.duplicateFiles.length === 0)).toBe(true);
  });

  it('lists it in one image, a batchGet and the client-wide listing', async () => {
    const fprint = original((await readAllPages<ImageAnswer>(`/v1/batches/${BATCH}/images`, client.key)).items)!.fprint;

    const one = await call<ImageAnswer>('GET', `/v1/batches/${BATCH}/images/${fprint}`, { key: client.key });
    const many = await call<{ items: ImageAnswer[] }>('POST', `/v1/batches/${BATCH}/images:batchGet`, {
      key: client.key,
      body: { fprints: [fprint] },
    });
    const clientWide = await call<{ items: ImageAnswer[] }>('GET', '/v1/images', { key: client.key, query: { fprint } });

    expect(one.body.duplicateFiles).toEqual(['copies/chelsea.png']);
    expect(many.body.items[0]?.duplicateFiles).toEqual(['copies/chelsea.png']);
    expect(clientWide.body.items[0]?.duplicateFiles).toEqual(['copies/chelsea.png']);
  });
});
