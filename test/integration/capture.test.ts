// Capture time, camera and place (docs/design.md §12) through the stack: camera-trap-like photos with EXIF made by
// sharp, uploaded, listed by capture time (a key condition on batch-captured), exported with the new columns and as a
// MegaDetector file with `datetime`; garbled EXIF, a 60 KB maker note and the EXIF bomb never fail an upload.
import { uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';
import { exifBombJpeg, photoWithExif } from '../helpers/exif-images';
import { megadetectorProblems } from '../helpers/megadetector-rules';

interface Img {
  fprint: string;
  fileName: string;
  status: string;
  capturedAt: string | null;
  camera: string | null;
  location: { lat: number; lon: number } | null;
}

describe('capture time, camera and place', () => {
  let client: TestClient;
  const batchId = uniqueId('cap');
  const fileNames = (items: Img[]) => items.map((i) => i.fileName);
  const list = (query: Record<string, string | number>) =>
    call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { limit: 100, ...query } });

  beforeAll(async () => {
    client = await newClient('cap');
    const photos: [string, Buffer][] = [
      [
        'cam1/dawn.jpg',
        await photoWithExif(
          {
            make: 'Reconyx',
            model: 'HC600',
            dateTimeOriginal: '2024:06:01 05:10:00',
            offsetTimeOriginal: '+02:00',
            lat: [47, 30, 0, 'N'],
            lon: [122, 15, 30, 'W'],
          },
          160,
          '#101010',
        ),
      ],
      ['cam1/noon.jpg', await photoWithExif({ make: 'Reconyx', model: 'HC600', dateTimeOriginal: '2024:06:01 12:00:00' }, 160, '#202020')],
      [
        'cam2/night.jpg',
        await photoWithExif({ make: 'Browning', dateTimeOriginal: '2024:05:31 23:59:59', makerNoteBytes: 60_000 }, 160, '#303030'),
      ],
      [
        'cam2/unset.jpg',
        await photoWithExif(
          { make: 'Bushnell', dateTimeOriginal: '0000:00:00 00:00:00', lat: [95, 0, 0, 'N'], lon: [1, 0, 0, 'E'] },
          160,
          '#404040',
        ),
      ],
      ['cam3/none.jpg', await photoWithExif({}, 160, '#505050')],
      ['cam4/bomb.jpg', await exifBombJpeg()],
      ['cam4/after-bomb.jpg', await photoWithExif({ make: 'Spypoint', lat: [10, 30, 0, 'S'], lon: [20, 0, 0, 'E'] }, 160, '#606060')],
    ];
    for (const [name, bytes] of photos) await uploadFile(`uploads/${client.clientId}/${batchId}/${name}`, bytes);
    await waitForBridgeIdle();
    await call('POST', `/v1/batches/${batchId}:close`, { key: client.key, body: {} });
  }, 120_000);

  it('records every upload, garbled or huge EXIF included, with the capture time, camera and place it could read', async () => {
    const items: Img[] = (await list({})).body.items;
    const byName = Object.fromEntries(items.map((i) => [i.fileName, i]));

    expect(items.every((i) => i.status === 'success')).toBe(true);
    expect(byName['cam1/dawn.jpg']).toMatchObject({
      capturedAt: '2024-06-01T05:10:00+02:00',
      camera: 'Reconyx HC600',
      location: { lat: 47.5, lon: -122.258333 },
    });
    expect(byName['cam1/noon.jpg']).toMatchObject({ capturedAt: '2024-06-01T12:00:00', camera: 'Reconyx HC600', location: null });
    expect(byName['cam2/night.jpg']).toMatchObject({ capturedAt: '2024-05-31T23:59:59', camera: 'Browning' });
    expect(byName['cam2/unset.jpg']).toMatchObject({ capturedAt: null, camera: 'Bushnell', location: null });
    expect(byName['cam3/none.jpg']).toMatchObject({ capturedAt: null, camera: null, location: null });
  });

  it('classifies the EXIF bomb as usual, with no capture facts, and its neighbour uploaded after it', async () => {
    const items: Img[] = (await list({})).body.items;
    const byName = Object.fromEntries(items.map((i) => [i.fileName, i]));

    expect(byName['cam4/bomb.jpg']).toMatchObject({ status: 'success', capturedAt: null, camera: null, location: null });
    expect(byName['cam4/after-bomb.jpg']).toMatchObject({
      status: 'success',
      capturedAt: null,
      camera: 'Spypoint',
      location: { lat: -10.5, lon: 20 },
    });
  });

  it('lists by capture time: the images that have one, oldest first', async () => {
    const res = await list({ order: 'captured' });

    expect(fileNames(res.body.items)).toEqual(['cam2/night.jpg', 'cam1/dawn.jpg', 'cam1/noon.jpg']);
  });

  it('lists a range of wall-clock times, inclusive, as the cameras wrote them', async () => {
    const day = await list({ capturedFrom: '2024-06-01', capturedTo: '2024-06-01' });
    const exact = await list({ capturedFrom: '2024-06-01T05:10:00', capturedTo: '2024-06-01T12:00' });
    const before = await list({ capturedTo: '2024-06-01T05:09:59' });

    expect(fileNames(day.body.items)).toEqual(['cam1/dawn.jpg', 'cam1/noon.jpg']);
    expect(fileNames(exact.body.items)).toEqual(['cam1/dawn.jpg', 'cam1/noon.jpg']);
    expect(fileNames(before.body.items)).toEqual(['cam2/night.jpg']);
  });

  it('pages a capture-time listing and combines it with other filters', async () => {
    const first = await list({ order: 'captured', limit: 2 });
    const second = await list({ order: 'captured', limit: 2, cursor: first.body.cursor });
    const named = await list({ order: 'captured', fileName: 'cam1/noon.jpg' });

    expect([...fileNames(first.body.items), ...fileNames(second.body.items)]).toEqual(['cam2/night.jpg', 'cam1/dawn.jpg', 'cam1/noon.jpg']);
    expect(second.body.cursor).toBeUndefined();
    expect(fileNames(named.body.items)).toEqual(['cam1/noon.jpg']);
  });

  it.each([
    ['capturedFrom after capturedTo', { capturedFrom: '2024-06-02', capturedTo: '2024-06-01' }, /capturedFrom/],
    ['a capture time with a zone', { capturedFrom: '2024-06-01T05:00:00Z' }, /capturedFrom/],
    ['an impossible month', { capturedTo: '2024-13-01' }, /capturedTo/],
    ['another order', { order: 'uploaded' }, /order/],
  ])('answers 400 with the error shape to %s', async (_, query, names) => {
    const res = await list(query);

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: expect.any(String), message: expect.stringMatching(names) });
  });

  it('exports captured_at, camera, lat and lon, and the MegaDetector datetime', async () => {
    const csv = await fetch(new URL(`/v1/batches/${batchId}/export?format=jsonl`, process.env.ICECAT_API_URL), {
      headers: { authorization: `Bearer ${client.key}` },
    });
    const rows = (await csv.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const md = await fetch(new URL(`/v1/batches/${batchId}/export?format=megadetector`, process.env.ICECAT_API_URL), {
      headers: { authorization: `Bearer ${client.key}` },
    });
    const text = await md.text();
    const dawn = JSON.parse(text).images.find((i: { file: string }) => i.file === 'cam1/dawn.jpg');

    expect(rows.find((r) => r.file_name === 'cam1/dawn.jpg')).toMatchObject({
      captured_at: '2024-06-01T05:10:00+02:00',
      camera: 'Reconyx HC600',
      lat: 47.5,
      lon: -122.258333,
    });
    expect(rows.find((r) => r.file_name === 'cam3/none.jpg')).toMatchObject({ captured_at: null, camera: null, lat: null, lon: null });
    expect(megadetectorProblems(text)).toEqual([]);
    expect(dawn.datetime).toBe('2024:06:01 05:10:00');
  });

  it('lists by capture time and by label from the CLI', async () => {
    const byTime = await icecat(['images', batchId, '--captured-from', '2024-06-01', '--by-capture-time', '--json'], client.key);
    const table = await icecat(['images', batchId, '--by-capture-time'], client.key);
    const anyLabel = (await list({})).body.items[0].labels[0].name as string;
    const want = (await list({ label: anyLabel })).body.items.map((i: Img) => i.fileName).sort();
    const byLabel = await icecat(['images', batchId, '--label', anyLabel.toUpperCase(), '--label', 'NoSuchLabel', '--json'], client.key);

    expect(byTime.code).toBe(0);
    expect(fileNames(JSON.parse(byTime.stdout).items)).toEqual(['cam1/dawn.jpg', 'cam1/noon.jpg']);
    expect(table.stdout).toMatch(/^cam1\/dawn\.jpg .* 2024-06-01T05:10:00\+02:00 /m);
    expect(fileNames(JSON.parse(byLabel.stdout).items).sort()).toEqual(want);
  });
});
