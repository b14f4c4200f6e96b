// Any label with its own threshold (docs/design.md §12): ?label=&minConfidence= on a batch's images, and the summary's
// top labels, exact under duplicates, reuse, a re-threshold and erasure — checked against the batch's own images.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

interface Img {
  fprint: string;
  fileName: string;
  status: string;
  labels: { name: string; confidence: number }[];
}

/** What the summary's labels must be: over the batch's classified images, each label at or above the threshold once. */
function expectedLabels(images: Img[], threshold: number): { name: string; images: number }[] {
  const counts = new Map<string, number>();
  for (const image of images.filter((i) => i.status === 'success')) {
    for (const name of new Set(image.labels.filter((l) => l.confidence >= threshold).map((l) => l.name)))
      counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts]
    .map(([name, n]) => ({ name, images: n }))
    .sort((a, b) => b.images - a.images || (a.name < b.name ? -1 : 1))
    .slice(0, 20);
}

describe('labels', () => {
  let client: TestClient;
  const first = uniqueId('lbl-a');
  const second = uniqueId('lbl-b');
  let images: Img[];

  const list = async (batch: string, query: Record<string, string | number>) =>
    call('GET', `/v1/batches/${batch}/images`, { key: client.key, query: { limit: 100, ...query } });

  beforeAll(async () => {
    client = await newClient('lbl');
    for (const [name, bytes] of [
      ['chelsea.png', fixture('chelsea.png')],
      ['chelsea copy.png', fixture('chelsea.png')],
      ['astronaut.png', fixture('astronaut.png')],
      ['coffee.png', fixture('coffee.png')],
      ['notes.png', Buffer.from('no image')],
    ] as const) {
      await uploadFile(`uploads/${client.clientId}/${first}/${name}`, bytes);
    }
    await waitForBridgeIdle();
    // Once the first batch holds its answer: a reuse.
    await uploadFile(`uploads/${client.clientId}/${second}/kitten.png`, fixture('chelsea.png'));
    await waitForBridgeIdle();
    await call('POST', `/v1/batches/${first}:close`, { key: client.key, body: {} });
    await call('POST', `/v1/batches/${second}:close`, { key: client.key, body: {} });
    images = (await list(first, {})).body.items;
  }, 120_000);

  it('lists the images with a label, case-insensitively, at any stored confidence by default', async () => {
    const cats = images.filter((i) => i.labels.some((l) => l.name === 'Cat'));

    const res = await list(first, { label: 'cat' });

    expect(cats.length).toBeGreaterThan(0);
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: Img) => i.fprint).sort()).toEqual(cats.map((i) => i.fprint).sort());
  });

  it('takes a label repeated: images with any of them', async () => {
    const want = images
      .filter((i) => i.labels.some((l) => l.name === 'Cat' || l.name === 'Person'))
      .map((i) => i.fprint)
      .sort();
    const url = new URL(`/v1/batches/${first}/images?label=Cat&label=person&limit=100`, process.env.ICECAT_API_URL);

    const res = await fetch(url, { headers: { authorization: `Bearer ${client.key}` } });
    const body = (await res.json()) as { items: Img[] };

    expect(body.items.map((i) => i.fprint).sort()).toEqual(want);
    expect(want.length).toBeGreaterThan(1);
  });

  it('keeps only images whose label is at or above minConfidence', async () => {
    const cat = images.find((i) => i.labels.some((l) => l.name === 'Cat'))!;
    const confidence = cat.labels.find((l) => l.name === 'Cat')!.confidence;

    const at = await list(first, { label: 'Cat', minConfidence: Math.floor(confidence) });
    const above = await list(first, { label: 'Cat', minConfidence: Math.min(100, Math.floor(confidence) + 1) });

    expect(at.body.items.map((i: Img) => i.fprint)).toContain(cat.fprint);
    expect(above.body.items.map((i: Img) => i.fprint)).not.toContain(cat.fprint);
  });

  it('pages a filtered listing like any other', async () => {
    const all = images.filter((i) => i.labels.length > 0).flatMap((i) => i.labels.map((l) => l.name));
    const label = all[0]!;
    const want = images
      .filter((i) => i.labels.some((l) => l.name === label))
      .map((i) => i.fprint)
      .sort();

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await list(first, { label, limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.body.items.map((i: Img) => i.fprint));
      cursor = page.body.cursor;
    } while (cursor);

    expect(seen.sort()).toEqual(want);
  });

  it.each([
    ['a label over 100 characters', { label: 'x'.repeat(101) }, /label/],
    ['minConfidence above 100', { label: 'Cat', minConfidence: 101 }, /minConfidence/],
    ['a negative minConfidence', { label: 'Cat', minConfidence: -1 }, /minConfidence/],
    ['minConfidence without a label', { minConfidence: 50 }, /minConfidence/],
  ])('answers 400 with the error shape to %s', async (_, query, names) => {
    const res = await list(first, query as Record<string, string | number>);

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: expect.any(String), message: expect.stringMatching(names) });
  });

  it("gives a done batch's top labels, each distinct image once: the duplicate adds nothing", async () => {
    const summary = (await call('GET', `/v1/batches/${first}`, { key: client.key })).body;

    expect(summary.counts.duplicate).toBe(1);
    expect(summary.labels).toEqual(expectedLabels(images, summary.catMinConfidence));
    expect(summary.labels.find((l: { name: string }) => l.name === 'Cat')?.images ?? 0).toBeLessThanOrEqual(1);
  });

  it('counts a reused image with the labels it carries', async () => {
    const summary = (await call('GET', `/v1/batches/${second}`, { key: client.key })).body;
    const reused = (await list(second, {})).body.items;

    expect(summary.counts.reused).toBe(1);
    expect(summary.labels).toEqual(expectedLabels(reused, summary.catMinConfidence));
  });

  it('counts again at the threshold :reclassify sets', async () => {
    const moved = await call('POST', `/v1/batches/${first}:reclassify`, { key: client.key, body: { catMinConfidence: 0 } });
    const summary = (await call('GET', `/v1/batches/${first}`, { key: client.key })).body;

    expect(moved.status).toBe(200);
    expect(summary.catMinConfidence).toBe(0);
    expect(summary.labels).toEqual(expectedLabels(images, 0));
  });

  it('has no labels in a list of batches, and none left once the batch is erased', async () => {
    const listed = (await call('GET', '/v1/batches', { key: client.key })).body.items.find(
      (b: { batchId: string }) => b.batchId === second,
    );
    await call('DELETE', `/v1/batches/${second}`, { key: client.key });

    expect(listed.labels).toBeNull();
    expect(listed.usage).toEqual({ detectLabelsCalls: 0, reused: 1, duplicates: 0, estimatedCostUsd: 0, savedUsd: 0.001 });
    expect((await call('GET', `/v1/batches/${second}`, { key: client.key })).status).toBe(404);
  });
});
