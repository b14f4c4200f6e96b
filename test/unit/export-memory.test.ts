// What bounds an export's memory besides its stream (docs/design.md, "Export memory"): no stage of the pipeline keeps
// a page while the next is read, each format reads only the attributes it writes, and a Query reads 200 items.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { exportImageOf } from '../../lib/api/export-batch';
import type { Image } from '../../lib/domain/image';
import type { ExportFormat } from '../../lib/export/encode';
import { jsonFloat } from '../../lib/export/megadetector';
import { mapPages } from '../../lib/export/pages';
import { type ExportImage, numberText } from '../../lib/export/rows';
import { exportChunks, writeExport } from '../../lib/export/writer';
import { DETECTIONS_READ, EXPORT_PAGE_ITEMS, ROWS_READ } from '../../lib/store/batch/pages';
import { IMAGE_ATTRIBUTES, toImage, toImageItem } from '../../lib/store/table/attributes';
import type { ImageItem } from '../../lib/store/table/schema';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const T = Date.UTC(2024, 5, 1, 6, 30, 5);
const box = (left: number, top: number) => ({ left, top, width: 0.3, height: 0.25 });

/** A page of records as the export maps them. */
const pageOf = (n: number, at: number): ExportImage[] =>
  Array.from({ length: n }, (_, i) =>
    exportImageOf({
      clientId: 'c',
      batchId: 'b',
      fprint: `${at}-${i}`.padStart(32, '0'),
      fileName: `cam${i % 3}/IMG_${at}_${i}.JPG`,
      status: 'success',
      expiresAt: 0,
      isCat: i % 2 === 0,
      labels: [
        { name: 'Cat', confidence: 95 },
        { name: 'Pet', confidence: 90 },
      ],
      uploadedAt: T,
      classifiedAt: T,
    }),
  );

/**
 * Runs `pages` through a stage and the export's own writer and sink; as the source makes each page after the first,
 * it collects garbage and says whether the page before is still reachable.
 */
async function previousPageAlive(
  stage: (pages: AsyncIterable<ExportImage[]>) => AsyncIterable<ExportImage[]>,
  format: ExportFormat,
): Promise<boolean[]> {
  const alive: boolean[] = [];
  let previous: WeakRef<ExportImage[]> | undefined;
  // Not a local of the source: a generator's local would itself keep the page (the hazard under test).
  const tracked = (page: ExportImage[]): ExportImage[] => {
    previous = new WeakRef(page);
    return page;
  };
  async function* source(): AsyncGenerator<ExportImage[]> {
    for (let at = 0; at < 4; at++) {
      // A turn of the event loop, as a Query's answer takes one: nothing of the last page's job is left on the stack.
      await new Promise((resolve) => setImmediate(resolve));
      if (previous) {
        gc();
        alive.push(previous.deref() !== undefined);
      }
      yield tracked(pageOf(50, at));
    }
  }
  const out = await writeExport(exportChunks(stage(source()), format, { catMinConfidence: 80 }), {
    inlineMaxBytes: 1024,
    spill: async (body) => {
      let bytes = 0;
      for await (const chunk of body) bytes += (chunk as Buffer).length;
      return bytes;
    },
  });
  expect(out.kind).toBe('stored');
  expect(out.rows).toBe(200);
  return alive;
}

describe('mapPages', () => {
  async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
    const out: T[] = [];
    for await (const x of it) out.push(x);
    return out;
  }
  async function* numbers(n: number, closed?: { done: boolean }): AsyncGenerator<number> {
    try {
      for (let i = 1; i <= n; i++) yield i;
    } finally {
      if (closed) closed.done = true;
    }
  }

  it('maps each page in order, leaves out a page mapped to undefined, and puts the ends around them', async () => {
    let mapped = 0;
    const out = await all(
      mapPages(
        numbers(4),
        (n) => {
          mapped++;
          return n % 2 ? `p${n}` : undefined;
        },
        { first: () => 'head', last: () => `tail after ${mapped}` },
      ),
    );
    expect(out).toEqual(['head', 'p1', 'p3', 'tail after 4']);
  });

  it('gives nothing for ends that answer undefined, and nothing but the ends for no pages', async () => {
    expect(await all(mapPages(numbers(0), String, { first: () => undefined, last: () => 'end' }))).toEqual(['end']);
    expect(await all(mapPages(numbers(2), String))).toEqual(['1', '2']);
  });

  it('closes its source when it is closed early', async () => {
    const closed = { done: false };
    for await (const x of mapPages(numbers(10, closed), String)) if (x === '2') break;
    expect(closed.done).toBe(true);
  });

  it("passes on its source's error", async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error('the Query failed');
    }
    await expect(all(mapPages(failing(), String))).rejects.toThrow('the Query failed');
  });
});

describe('a page in the export pipeline', () => {
  it.each(['csv', 'megadetector'] as const)('is unreachable once encoded, while the next is read (%s, mapPages)', async (format) => {
    const alive = await previousPageAlive((pages) => mapPages(pages, (page) => page.map((image) => ({ ...image }))), format);
    expect(alive).toEqual([false, false, false]);
  });

  it('is kept while the next is read by a plain for-await stage: the hazard mapPages avoids', async () => {
    async function* plain(pages: AsyncIterable<ExportImage[]>): AsyncGenerator<ExportImage[]> {
      for await (const page of pages) yield page.map((image) => ({ ...image }));
    }
    const alive = await previousPageAlive(plain, 'csv');
    expect(alive).toEqual([true, true, true]);
  });
});

/** The item as a Query projecting `attributes` answers it: those attributes only, when the item has them. */
function projected(item: ImageItem, attributes: readonly (keyof typeof IMAGE_ATTRIBUTES)[]): ImageItem {
  const full = item as unknown as Record<string, unknown>;
  const names = attributes.map((a) => IMAGE_ATTRIBUTES[a]);
  return Object.fromEntries(names.filter((n) => full[n] !== undefined).map((n) => [n, full[n]])) as unknown as ImageItem;
}

/** Every kind of record an export meets, with every attribute the table may hold. */
function records(): ImageItem[] {
  const base: Image = {
    clientId: 'c',
    batchId: 'b',
    fprint: 'a'.repeat(32),
    status: 'success',
    expiresAt: 1_900_000_000,
    key: 'uploads/c/b/cam1/IMG_0001.JPG',
    etag: '"e"',
    fileName: 'cam1/IMG_0001.JPG',
    uploadedAt: T,
    classifiedAt: T + 1500,
    isCat: true,
    catConfidence: 93.456,
    cats: [{ confidence: 93.456, box: box(0.1, 0.2) }],
    labels: [
      { name: 'Cat', confidence: 93.456 },
      { name: 'Dog', confidence: 81 },
      { name: 'Person', confidence: 77.5 },
    ],
    detection: { model: '3.0', labels: [{ name: 'Cat', confidence: 93.456, parents: ['Animal'], instances: 1 }] },
    detections: {
      model: '3.0',
      boxes: [
        { name: 'Cat', confidence: 93.456, box: box(0.1, 0.2) },
        { name: 'Dog', confidence: 81, box: box(0.5, 0.1) },
        { name: 'Person', confidence: 77.5, box: box(0.6, 0.6) },
      ],
    },
    capturedAt: '2024-06-01T06:30:00+02:00',
    camera: 'Reconyx HP2X',
    location: { lat: 47.3769, lon: 8.5417 },
    phash: 'ffee',
    width: 4000,
    height: 3000,
    format: 'jpeg',
    restingKey: 'processed/c/b/x.jpg',
    duplicates: 2,
    duplicateFiles: ['copies/IMG_0001.JPG', '=copy,"2".JPG'],
    review: { isCat: false, note: 'a fox, "not" a cat', reviewedAt: T + 9000, machineIsCat: true },
  };
  const items: Image[] = [
    base,
    {
      ...base,
      fprint: 'b'.repeat(32),
      review: undefined,
      duplicates: 0,
      duplicateFiles: undefined,
      location: undefined,
      capturedAt: '2024-06-01T06:30:00',
    },
    { ...base, fprint: 'c'.repeat(32), reused: true, detections: undefined, cats: [], isCat: false, catConfidence: 0 },
    {
      clientId: 'c',
      batchId: 'b',
      fprint: `fail-${'d'.repeat(32)}`,
      status: 'fail',
      expiresAt: 1_900_000_000,
      fileName: 'notes.png',
      uploadedAt: T,
      classifiedAt: T,
      errorCode: 'NotAnImage',
      errorMessage: 'the file is not an image',
      restingKey: 'failed/c/b/notes.png',
    },
    {
      clientId: 'c',
      batchId: 'b',
      fprint: 'e'.repeat(32),
      status: 'processing',
      expiresAt: 1_900_000_000,
      fileName: '+pending.jpg',
      claimId: 'k',
      leaseUntil: T,
    },
  ];
  const stored = items.map((image) => toImageItem(image));
  // An upload still classifying has its time in received_ts only.
  const pending = stored[4] as unknown as Record<string, unknown>;
  delete pending.upload_ts;
  pending.received_ts = T - 5000;
  return stored;
}

async function exported(items: ImageItem[], format: ExportFormat): Promise<string> {
  async function* pages(): AsyncGenerator<ExportImage[]> {
    yield items.map((item) => exportImageOf(toImage(item)));
  }
  const out = await writeExport(exportChunks(pages(), format, { catMinConfidence: 80, doneAt: T }), {
    inlineMaxBytes: 1 << 20,
    spill: async () => 0,
  });
  if (out.kind !== 'inline') throw new Error('not inline');
  return out.body;
}

describe('what an export reads', () => {
  it('reads 200 items a Query', () => {
    expect(EXPORT_PAGE_ITEMS).toBe(200);
    expect(ROWS_READ.pageSize).toBe(200);
    expect(DETECTIONS_READ.pageSize).toBe(200);
  });

  it('reads for CSV and JSON Lines what a row shows (the boxes for their model), and not the raw answer, the keys or the error message', () => {
    expect([...ROWS_READ.attributes].sort()).toEqual(
      [
        'camera',
        'capturedAt',
        'catConfidence',
        'classifiedAt',
        'detections',
        'duplicateFiles',
        'duplicates',
        'errorCode',
        'fileName',
        'fprint',
        'isCat',
        'labels',
        'location',
        'model',
        'receivedAt',
        'review',
        'status',
        'uploadedAt',
      ].sort(),
    );
  });

  it('reads for MegaDetector the boxes, the model (dated by its classification), size, capture time, review and outcome, and not the labels', () => {
    expect([...DETECTIONS_READ.attributes].sort()).toEqual(
      [
        'capturedAt',
        'cats',
        'classifiedAt',
        'model',
        'detections',
        'duplicateFiles',
        'duplicates',
        'errorCode',
        'fileName',
        'fprint',
        'review',
        'status',
        'width',
        'height',
      ].sort(),
    );
  });

  it.each([
    ['csv', ROWS_READ],
    ['jsonl', ROWS_READ],
    ['megadetector', DETECTIONS_READ],
  ] as const)('writes the same %s from the projected items as from whole items', async (format, read) => {
    const items = records();
    const whole = await exported(items, format);
    const read_ = await exported(
      items.map((item) => projected(item, read.attributes)),
      format,
    );
    expect(read_).toBe(whole);
    // The records carry what the format writes (so the comparison can tell a missing attribute).
    if (format === 'megadetector') expect(whole).toContain('"review": {"isCat": false}');
    else expect(whole).toContain('Reconyx HP2X');
  });
});

describe('jsonFloat without String()', () => {
  it('writes a fraction as String wrote it at six decimals (every step of 1e-6 in -1..2, and spread values)', () => {
    const before = (n: number): string => {
      const rounded = Math.round(n * 1e6) / 1e6;
      return Number.isInteger(rounded) ? rounded.toFixed(1) : String(rounded);
    };
    const values: number[] = [];
    for (let k = -1_000_000; k <= 2_000_000; k++) values.push(k / 1e6);
    for (let k = 1; k < 100_000; k++) values.push(k * 12_345.678_901_23, -k / 7, k / 3 + 1e-7);
    const differing = values.filter((v) => jsonFloat(v) !== before(v));
    expect(differing).toEqual([]);
    expect([jsonFloat(0.935), jsonFloat(0.000_001), jsonFloat(-0.5), jsonFloat(0.1 + 0.2)]).toEqual(['0.935', '0.000001', '-0.5', '0.3']);
  });
});

describe('numberText', () => {
  it('writes a number as String does, fractions, integers, extremes and non-finite alike', () => {
    const values = [
      0,
      -0,
      1,
      -1,
      93.5,
      97.46,
      0.1 + 0.2,
      47.376_887_5,
      -122.419_415_5,
      1e-7,
      123e-20,
      1e21,
      2 ** 53 + 2,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      NaN,
      Infinity,
      -Infinity,
    ];
    for (let k = 1; k < 50_000; k++) values.push(k / 100, k * 1.000_001, -k / 3);
    expect(values.filter((v) => numberText(v) !== String(v))).toEqual([]);
  });
});
