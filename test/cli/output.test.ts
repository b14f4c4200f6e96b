import type { BatchSummary, Image } from '../../lib/api/client-contract';
import { fileRows, fileTable, formatBytes, formatDuration, formatTopLabels, similarTable, summaryLines } from '../../lib/cli/output';
import { outOfSpaceLine } from '../../lib/cli/upload-command';
import type { UploadResult } from '../../lib/cli/uploader';

const image = (fileName: string, extra: Partial<Image> = {}): Image => ({
  batchId: 'b1',
  fprint: `fp-${fileName}`,
  fileName,
  status: 'success',
  isCat: false,
  labels: [],
  uploadedAt: '2026-01-01T00:00:00.000Z',
  classifiedAt: '2026-01-01T00:00:01.000Z',
  duplicates: 0,
  error: null,
  ...extra,
});

const CAT = image('trip/cat.jpg', {
  isCat: true,
  catConfidence: 93.4,
  labels: [
    { name: 'Animal', confidence: 90.2 },
    { name: 'Cat', confidence: 93.4 },
    { name: 'Pet', confidence: 91 },
    { name: 'Mammal', confidence: 80 },
  ],
  duplicates: 1,
  duplicateFiles: ['trip/cat copy.jpg'],
});
const BROKEN = image('trip/broken.jpg', { status: 'fail', isCat: null, error: { code: 'NotAnImage', message: 'not an image' } });

describe('fileRows', () => {
  it('gives each file its record, a listed copy its original, and a file never sent its reason', () => {
    const rows = fileRows(
      ['trip/cat.jpg', 'trip/cat copy.jpg', 'trip/broken.jpg'],
      [CAT, BROKEN],
      [{ file: 'trip/empty.jpg', path: '/x/trip/empty.jpg', code: 'EmptyFile', message: 'the file is empty (0 bytes)' }],
      true,
    );

    expect(rows).toEqual([
      { file: 'trip/broken.jpg', status: 'fail', cat: '', labels: '', duplicateOf: '', error: 'NotAnImage: not an image' },
      {
        file: 'trip/cat copy.jpg',
        status: 'duplicate',
        cat: 'yes 93%',
        labels: 'Cat 93, Pet 91, Animal 90',
        duplicateOf: 'trip/cat.jpg',
        error: '',
      },
      { file: 'trip/cat.jpg', status: 'success', cat: 'yes 93%', labels: 'Cat 93, Pet 91, Animal 90', duplicateOf: '', error: '' },
      { file: 'trip/empty.jpg', status: 'fail', cat: '', labels: '', duplicateOf: '', error: 'EmptyFile: the file is empty (0 bytes)' },
    ]);
  });

  it('calls a sent file without a record a duplicate once the batch is done, and uploaded before', () => {
    const withoutNames = { ...CAT, duplicateFiles: undefined };

    expect(fileRows(['trip/cat.jpg', 'trip/other.jpg'], [withoutNames], [], true)[1]).toMatchObject({
      file: 'trip/other.jpg',
      status: 'duplicate',
    });
    expect(fileRows(['trip/cat.jpg', 'trip/other.jpg'], [withoutNames], [], false)[1]).toMatchObject({
      file: 'trip/other.jpg',
      status: 'uploaded',
    });
  });

  it('marks files the network kept back as not sent', () => {
    const rows = fileRows([], [], [{ file: 'a.jpg', path: '/a.jpg', code: 'NetworkError', message: 'ECONNRESET', unsent: true }], false);

    expect(rows).toEqual([expect.objectContaining({ file: 'a.jpg', status: 'not sent', error: 'NetworkError: ECONNRESET' })]);
  });
});

describe('fileTable', () => {
  it('prints a header and one aligned line per file, with an error column only when needed', () => {
    const text = fileTable(fileRows(['trip/cat.jpg', 'trip/cat copy.jpg'], [CAT], [], true));

    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^FILE\s+STATUS\s+CAT\s+TOP LABELS\s+DUPLICATE OF$/);
    expect(lines[1]).toMatch(/^trip\/cat copy\.jpg\s+duplicate\s+yes 93%\s+Cat 93, Pet 91, Animal 90\s+trip\/cat\.jpg$/);
    expect(lines[2]).toMatch(/^trip\/cat\.jpg\s+success/);
    expect(lines[1]?.indexOf('duplicate')).toBe(lines[0]?.indexOf('STATUS'));
    expect(fileTable(fileRows(['trip/broken.jpg'], [BROKEN], [], true)).split('\n')[0]).toMatch(/ERROR$/);
  });
});

describe('similarTable', () => {
  it('prints one line per image of each group, with its file name where the image has one', () => {
    const groups = [
      { fprints: ['f1', 'f2', 'f3'], maxDistance: 3, fileNames: ['a.jpg', 'trip/a small.jpg', null] },
      { fprints: ['f4', 'f5'], maxDistance: 0, fileNames: ['b.png', 'c.png'] },
    ];

    const lines = similarTable(groups).split('\n');

    expect(lines).toEqual([
      'GROUP  MAX DISTANCE  FILE              FPRINT',
      '1      3             a.jpg             f1',
      '1      3             trip/a small.jpg  f2',
      '1      3                               f3',
      '2      0             b.png             f4',
      '2      0             c.png             f5',
    ]);
  });
});

describe('formatting', () => {
  it('writes sizes in decimal units and durations compactly', () => {
    expect([0, 999, 1_500, 104_857_600].map(formatBytes)).toEqual(['0 B', '999 B', '1.5 KB', '104.9 MB']);
    expect([400, 59_000, 61_000, 3_700_000].map(formatDuration)).toEqual(['0s', '59s', '1m01s', '1h01m']);
  });

  it('keeps the best three labels, best first', () => {
    expect(formatTopLabels(CAT.labels)).toBe('Cat 93, Pet 91, Animal 90');
    expect(formatTopLabels([])).toBe('');
  });

  it('prints a summary as aligned key lines, leaving out what the server did not send', () => {
    const summary: BatchSummary = {
      batchId: 'b1',
      status: 'done',
      expected: 3,
      counts: { total: 3, success: 2, fail: 1, duplicate: 0, cats: 1 },
      debug: false,
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-02-01T00:00:00.000Z',
    };

    const text = summaryLines(summary);

    expect(text).toContain('status:    done');
    expect(text).toContain('fail:      1');
    expect(text).not.toContain('pending');
  });
});

describe('outOfSpaceLine', () => {
  const problem = (file: string) => ({ file, path: `/p/${file}`, code: 'NotSent', message: 'not sent' });
  it('says in one line that the service is out of space and which files did not go', () => {
    const line = outOfSpaceLine(
      { ...emptyResult(), outOfSpace: 'S3: 500 InternalError: out of disk space', unsent: [problem('b.png'), problem('a.png')] },
      'run it again',
    );
    expect(line).toBe(
      'the service is out of disk space (S3: 500 InternalError: out of disk space): 2 files did not go: a.png, b.png; once it has room, run it again to send them',
    );
    expect(line).not.toContain('\n');
  });
  it('lists the first 20 names, then how many more', () => {
    const unsent = Array.from({ length: 25 }, (_, i) => problem(`f${String(i).padStart(2, '0')}.png`));
    expect(outOfSpaceLine({ ...emptyResult(), outOfSpace: 'the API: full', unsent }, 'retry')).toMatch(
      /25 files did not go: f00\.png, .*, f19\.png, and 5 more; /,
    );
  });
});

function emptyResult(): UploadResult {
  return { sent: new Set(), uploadedFiles: 0, uploadedBytes: 0, alreadyThere: 0, resumed: false, rejected: [], unsent: [] };
}
