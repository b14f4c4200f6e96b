import { csvField, csvHeader, csvLine, jsonLine, neutralizeFormula } from '../../lib/export/encode';
import { EXPORT_COLUMNS, type ExportImage, type ExportRow, exportRows, formatLabels } from '../../lib/export/rows';
import { type ExportChunk, exportChunks, writeExport } from '../../lib/export/writer';

const T = Date.UTC(2024, 4, 1, 12, 0, 0);

const image = (over: Partial<ExportImage> = {}): ExportImage => ({
  fprint: 'f0',
  fileName: 'cat.jpg',
  status: 'success',
  isCat: true,
  labels: [
    { name: 'Cat', confidence: 97.456 },
    { name: 'Pet', confidence: 90 },
  ],
  uploadedAt: T,
  classifiedAt: T + 1500,
  duplicates: 0,
  duplicateFiles: [],
  error: null,
  ...over,
});

/** Splits CSV text into records of fields per RFC 4180 (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  return records;
}

/** The record's own row. */
function rowOf(over: Partial<ExportImage> = {}): ExportRow {
  const [row] = exportRows(image(over));
  if (!row) throw new Error('no row');
  return row;
}

async function* pagesOf(pages: ExportImage[][], pulled?: number[]): AsyncGenerator<ExportImage[]> {
  for (const [i, page] of pages.entries()) {
    pulled?.push(i);
    yield page;
  }
}

describe('exportRows', () => {
  it('gives a record without duplicates one row with its classification and ISO times', () => {
    expect(exportRows(image())).toEqual([
      {
        file_name: 'cat.jpg',
        status: 'success',
        is_cat: true,
        cat_confidence: 97.46,
        labels: 'Cat:97.46|Pet:90',
        fprint: 'f0',
        duplicate_of: null,
        error_code: null,
        uploaded_at: '2024-05-01T12:00:00.000Z',
        classified_at: '2024-05-01T12:00:01.500Z',
        captured_at: null,
        camera: null,
        lat: null,
        lon: null,
        model: null,
        machine_is_cat: true,
        reviewed: false,
        review_note: null,
      },
    ]);
  });

  it('gives the model that answered as name@version, on the duplicates too', () => {
    const rows = exportRows(
      image({ model: { name: 'rekognition-detect-labels', version: '3.0' }, duplicates: 1, duplicateFiles: ['b.jpg'] }),
    );

    expect(rows.map((r) => r.model)).toEqual(['rekognition-detect-labels@3.0', 'rekognition-detect-labels@3.0']);
  });

  it("gives the capture time, camera and place, the original's on a duplicate's row", () => {
    const rows = exportRows(
      image({
        capturedAt: '2024-06-01T06:30:00+02:00',
        camera: 'Reconyx HC600',
        location: { lat: 47.5, lon: -122.25 },
        duplicates: 1,
        duplicateFiles: ['b.jpg'],
      }),
    );

    expect(rows.map((r) => [r.captured_at, r.camera, r.lat, r.lon])).toEqual([
      ['2024-06-01T06:30:00+02:00', 'Reconyx HC600', 47.5, -122.25],
      ['2024-06-01T06:30:00+02:00', 'Reconyx HC600', 47.5, -122.25],
    ]);
  });

  it("carries a person's verdict to the record's row and its duplicates' rows, beside the machine's", () => {
    const rows = exportRows(
      image({ isCat: false, machineIsCat: true, review: { note: 'a statue' }, duplicates: 1, duplicateFiles: ['copy.jpg'] }),
    );

    expect(rows.map((r) => [r.file_name, r.is_cat, r.machine_is_cat, r.reviewed, r.review_note])).toEqual([
      ['cat.jpg', false, true, true, 'a statue'],
      ['copy.jpg', false, true, true, 'a statue'],
    ]);
  });

  it("gives each duplicate upload its own row: its file name, status duplicate, the original's name and labels", () => {
    const rows = exportRows(image({ duplicates: 2, duplicateFiles: ['copy 1.jpg', 'sub/copy 2.jpg'] }));
    expect(rows).toHaveLength(3);
    expect(rows.slice(1)).toEqual([
      expect.objectContaining({
        file_name: 'copy 1.jpg',
        status: 'duplicate',
        duplicate_of: 'cat.jpg',
        labels: 'Cat:97.46|Pet:90',
        fprint: 'f0',
      }),
      expect.objectContaining({ file_name: 'sub/copy 2.jpg', status: 'duplicate', duplicate_of: 'cat.jpg', is_cat: true }),
    ]);
  });

  it('still gives a row to each duplicate counted past the stored names, with an empty file name', () => {
    const rows = exportRows(image({ duplicates: 3, duplicateFiles: ['copy 1.jpg'] }));
    expect(rows.map((r) => r.file_name)).toEqual(['cat.jpg', 'copy 1.jpg', null, null]);
  });

  it('gives a failed upload its error code and no classification', () => {
    const row = rowOf({ status: 'fail', isCat: null, labels: [], classifiedAt: null, error: { code: 'NotAnImage' } });
    expect(row).toMatchObject({ status: 'fail', error_code: 'NotAnImage', is_cat: null, cat_confidence: null, labels: '' });
  });

  it("takes the record's own cat confidence over the Cat label's", () => {
    expect(rowOf({ catConfidence: 42 }).cat_confidence).toBe(42);
  });

  it('formats labels as Name:confidence joined by |', () => {
    expect(
      formatLabels([
        { name: 'Cat', confidence: 99.999 },
        { name: 'Animal', confidence: 80.1 },
      ]),
    ).toBe('Cat:100|Animal:80.1');
  });
});

describe('CSV', () => {
  it('has the documented columns in order, CRLF-terminated', () => {
    expect(csvHeader()).toBe(
      'file_name,status,is_cat,cat_confidence,labels,fprint,duplicate_of,error_code,uploaded_at,classified_at,machine_is_cat,reviewed,review_note,captured_at,camera,lat,lon,model\r\n',
    );
  });

  it('quotes fields with commas, quotes or line breaks and doubles their quotes (RFC 4180)', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "cat"')).toBe('"say ""cat"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('plain.jpg')).toBe('plain.jpg');
  });

  it('round-trips awkward file names through a CSV parser', () => {
    const names = ['a,b.jpg', 'quote"d.jpg', 'new\r\nline.jpg', 'ünï cødé 猫.png'];
    const text = csvHeader() + names.map((n) => csvLine(rowOf({ fileName: n }))).join('');
    const records = parseCsv(text);
    expect(records[0]).toEqual([...EXPORT_COLUMNS]);
    expect(records.slice(1).map((r) => r[0])).toEqual(names);
    expect(records.every((r) => r.length === EXPORT_COLUMNS.length)).toBe(true);
  });

  it('prefixes text cells that a spreadsheet would run as a formula with an apostrophe', () => {
    for (const name of ['=HYPERLINK("x").jpg', '+1.jpg', '-2.jpg', '@SUM(A1).jpg', '\tx.jpg']) {
      const cell = parseCsv(csvLine(rowOf({ fileName: name })))[0]?.[0];
      expect(cell).toBe(`'${name}`);
    }
    expect(neutralizeFormula('cat.jpg')).toBe('cat.jpg');
  });

  it('writes nulls as empty cells and booleans as true/false', () => {
    const row = rowOf({ status: 'pending', isCat: null, labels: [], uploadedAt: null, classifiedAt: null });
    expect(csvLine(row)).toBe('cat.jpg,pending,,,,f0,,,,,,false,,,,,,\r\n');
    expect(csvLine(rowOf({ isCat: false }))).toContain(',false,');
  });
});

describe('JSON Lines', () => {
  it('writes one JSON object per line, keys in column order, nulls kept, file names unaltered', () => {
    const line = jsonLine(rowOf({ fileName: '=x.jpg', classifiedAt: null }));
    expect(line.endsWith('\n')).toBe(true);
    expect(Object.keys(JSON.parse(line))).toEqual([...EXPORT_COLUMNS]);
    expect(JSON.parse(line)).toMatchObject({ file_name: '=x.jpg', classified_at: null });
  });
});

describe('exportChunks', () => {
  it('yields the header, then one chunk per page with its row count (duplicates included)', async () => {
    const chunks: ExportChunk[] = [];
    const pages = [[image(), image({ fprint: 'f1', duplicates: 1, duplicateFiles: ['d.jpg'] })], [], [image({ fprint: 'f2' })]];
    for await (const c of exportChunks(pagesOf(pages), 'csv')) chunks.push(c);
    expect(chunks.map((c) => c.rows)).toEqual([0, 3, 1]);
    expect(parseCsv(chunks.map((c) => c.text).join(''))).toHaveLength(5);
  });

  it('has no header in JSON Lines', async () => {
    const chunks: ExportChunk[] = [];
    for await (const c of exportChunks(pagesOf([[image()]]), 'jsonl')) chunks.push(c);
    expect(chunks).toHaveLength(1);
    expect(JSON.parse(chunks[0]?.text ?? '{}').fprint).toBe('f0');
  });
});

describe('writeExport', () => {
  const pages = (n: number) => Array.from({ length: n }, (_, p) => Array.from({ length: 10 }, (_, i) => image({ fprint: `f${p}-${i}` })));
  const collect = async (body: NodeJS.ReadableStream) => {
    const parts: Buffer[] = [];
    for await (const part of body) parts.push(part as Buffer);
    return Buffer.concat(parts).toString();
  };

  it('answers inline when the whole export fits the bound, and never calls the sink', async () => {
    const spill = jest.fn();
    const out = await writeExport(exportChunks(pagesOf(pages(2)), 'csv'), { inlineMaxBytes: 1 << 20, spill });
    expect(out.kind).toBe('inline');
    expect(out.rows).toBe(20);
    expect(spill).not.toHaveBeenCalled();
    if (out.kind === 'inline') expect(parseCsv(out.body)).toHaveLength(21);
  });

  it('hands the sink the whole export once it outgrows the bound, having read only the pages past it', async () => {
    const pulled: number[] = [];
    let pulledWhenSpilled = -1;
    let text = '';
    const out = await writeExport(exportChunks(pagesOf(pages(50), pulled), 'csv'), {
      inlineMaxBytes: 2000,
      spill: async (body) => {
        pulledWhenSpilled = pulled.length;
        text = await collect(body);
        return 'stored-key';
      },
    });
    expect(out).toMatchObject({ kind: 'stored', stored: 'stored-key', rows: 500, bytes: Buffer.byteLength(text) });
    expect(pulledWhenSpilled).toBeLessThan(5);
    const records = parseCsv(text);
    expect(records).toHaveLength(501);
    expect(records[0]?.[0]).toBe('file_name');
    expect(new Set(records.slice(1).map((r) => r[5])).size).toBe(500);
  });

  it('reads a page only once a slow sink has taken the last: at most one chunk ahead of it, whatever the batch size', async () => {
    const produced: number[] = [];
    let consumed = 0;
    let mostAhead = 0;
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const out = await writeExport(exportChunks(pagesOf(pages(200), produced), 'csv'), {
      inlineMaxBytes: 500,
      spill: async (body) => {
        for await (const _part of body) {
          consumed++;
          // The sink stalls: whatever the writer reads meanwhile is held in memory.
          await turns(20);
          mostAhead = Math.max(mostAhead, produced.length - consumed);
        }
        return 'stored';
      },
    });
    expect(out.rows).toBe(2000);
    expect(produced).toHaveLength(200);
    // The page being encoded and the chunk the stream holds; Readable.from's default would read 16 ahead.
    expect(mostAhead).toBeLessThanOrEqual(2);
  });
});
