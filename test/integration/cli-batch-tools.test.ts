// The `icecat` CLI's commands on a batch after its upload, run as a user runs them against the local stack: export
// (CSV and JSON Lines, to stdout and to a file, inline and through the stored export's redirect), similar (table and
// JSON), delete (then status says the batch is gone), and the upload table's DUPLICATE OF column.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { call, fprints, newClient, seedBatch, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const BATCH = 'garden';

let workDir: string;
let client: TestClient;
/** `icecat upload --wait` of the folder: its table on stdout. */
let uploaded: { code: number; stdout: string; stderr: string };
let total: number;
/** Which of the two uploads of chelsea.png's pixels the ingest recorded first, and the other. */
let original: string;
let copy: string;

/**
 * garden/chelsea.png and garden/copy/chelsea.png (the very pixels twice: one is a duplicate of the other), the JPEG
 * re-encoding garden/near/chelsea-q60.jpg (a near-duplicate: other pixels, same picture), garden/coffee.png and
 * garden/astronaut.png.
 */
async function makeFolder(): Promise<string> {
  workDir = mkdtempSync(path.join(tmpdir(), 'icecat-cli-tools-'));
  const garden = path.join(workDir, 'garden');
  mkdirSync(path.join(garden, 'near'), { recursive: true });
  mkdirSync(path.join(garden, 'copy'));
  for (const name of ['chelsea.png', 'coffee.png', 'astronaut.png']) copyFileSync(path.join(FIXTURES, name), path.join(garden, name));
  copyFileSync(path.join(FIXTURES, 'chelsea.png'), path.join(garden, 'copy', 'chelsea.png'));
  writeFileSync(
    path.join(garden, 'near', 'chelsea-q60.jpg'),
    await sharp(path.join(FIXTURES, 'chelsea.png')).jpeg({ quality: 60 }).toBuffer(),
  );
  return garden;
}

beforeAll(async () => {
  const garden = await makeFolder();
  client = await newClient('cli-tools');
  uploaded = await icecat(['upload', garden, '--batch', BATCH, '--wait'], client.key);
  const status = await icecat(['status', BATCH, '--json'], client.key);
  total = JSON.parse(status.stdout).counts.total;
  // The ingest handles uploads concurrently: either copy of the cat can be the one recorded first.
  const images = JSON.parse((await icecat(['images', BATCH, '--json'], client.key)).stdout).items as {
    fileName: string;
    duplicateFiles: string[];
  }[];
  const repeated = images.find((i) => i.duplicateFiles.length > 0);
  [original, copy] = [repeated?.fileName ?? '', repeated?.duplicateFiles[0] ?? ''];
}, 180_000);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** CSV lines of an export whose fields hold no quotes or line breaks (these file names and labels do not). */
const csvRows = (text: string): string[][] =>
  text
    .trimEnd()
    .split(/\r?\n/)
    .map((line) => line.split(','));

describe('icecat upload of a folder with a duplicate', () => {
  it('exits 0 with five files in the batch, one of them a duplicate', () => {
    expect(uploaded.code).toBe(0);
    expect(total).toBe(5);
    expect([original, copy].sort()).toEqual(['garden/chelsea.png', 'garden/copy/chelsea.png']);
  });

  it("shows the original's file name in the duplicate's DUPLICATE OF column, and none elsewhere", () => {
    const lines = uploaded.stdout.split('\n');
    const header = lines.findIndex((l) => /^FILE +STATUS +CAT +TOP LABELS +DUPLICATE OF$/.test(l));
    const rows = lines.slice(header + 1, header + 6).map((l) => l.split(/ {2,}/));

    expect(header).toBeGreaterThanOrEqual(0);
    const expected = new Map([
      ['garden/astronaut.png', ['success', '']],
      [original, ['success', '']],
      [copy, ['duplicate', original]],
      ['garden/coffee.png', ['success', '']],
      ['garden/near/chelsea-q60.jpg', ['success', '']],
    ]);
    expect(rows.map((r) => [r[0], r[1], r[4] ?? ''])).toEqual([...expected].map(([file, [status, of]]) => [file, status, of]).sort());
  });
});

describe('icecat export', () => {
  it('prints CSV with a header and one row per uploaded file: counts.total rows', async () => {
    const run = await icecat(['export', BATCH], client.key);

    expect(run.code).toBe(0);
    const [head, ...rows] = csvRows(run.stdout);
    expect(head).toEqual([
      'file_name',
      'status',
      'is_cat',
      'cat_confidence',
      'labels',
      'fprint',
      'duplicate_of',
      'error_code',
      'uploaded_at',
      'classified_at',
      'machine_is_cat',
      'reviewed',
      'review_note',
      'captured_at',
      'camera',
      'lat',
      'lon',
      'model',
    ]);
    expect(rows).toHaveLength(total);
    const copyRow = rows.find((r) => r[0] === copy);
    expect(copyRow?.[1]).toBe('duplicate');
    expect(copyRow?.[6]).toBe(original);
  });

  it('prints JSON Lines with --format jsonl: counts.total objects', async () => {
    const run = await icecat(['export', BATCH, '--format', 'jsonl'], client.key);

    expect(run.code).toBe(0);
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { file_name: string; status: string });
    expect(rows).toHaveLength(total);
    expect(rows.map((r) => r.file_name).sort()).toEqual([
      'garden/astronaut.png',
      'garden/chelsea.png',
      'garden/coffee.png',
      'garden/copy/chelsea.png',
      'garden/near/chelsea-q60.jpg',
    ]);
  });

  it('writes the file named by -o, printing nothing on stdout', async () => {
    const file = path.join(workDir, 'garden.csv');

    const run = await icecat(['export', BATCH, '-o', file], client.key);

    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toMatch(/^wrote [\d.]+ (B|KB) of csv to .*garden\.csv$/m);
    expect(csvRows(readFileSync(file, 'utf8'))).toHaveLength(total + 1);
  });

  it('follows a stored export’s redirect to S3 (past the inline bound) and writes every row', async () => {
    const large = await newClient('cli-tools-large');
    const seeded = await seedBatch(
      large.clientId,
      fprints(60).map((fprint, i) => ({ fprint, uploadTs: Date.now() - i * 1000, fileName: `IMG_${String(i).padStart(4, '0')}.jpg` })),
      { n_total: 60, n_success: 60, closed: true, done_ts: Math.floor(Date.now() / 1000) },
    );
    const file = path.join(workDir, 'large.jsonl');

    const run = await icecat(['export', seeded, '--json', '-o', file], large.key);

    expect(run.code).toBe(0);
    const rows = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(rows).toHaveLength(60);
    expect(readFileSync(file).length).toBeGreaterThan(4096);
  });
});

describe('icecat similar', () => {
  it('prints the photo and its re-encoding as one group, by file name', async () => {
    const run = await icecat(['similar', BATCH], client.key);

    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^GROUP +MAX DISTANCE +FILE +FPRINT$/);
    const rows = lines.slice(1).map((l) => l.split(/ {2,}/));
    expect(rows.map((r) => r[2]).sort()).toEqual([original, 'garden/near/chelsea-q60.jpg'].sort());
    expect(rows.map((r) => r[0])).toEqual(['1', '1']);
    expect(Number(rows[0]![1])).toBeLessThanOrEqual(10);
    expect(rows[1]![1]).toBe(rows[0]![1]);
  });

  it('prints the groups as JSON with --json, and none at --max-distance 0 unless the hashes are equal', async () => {
    const asJson = await icecat(['similar', BATCH, '--json'], client.key);
    const tight = await icecat(['similar', BATCH, '--json', '--max-distance', '0'], client.key);

    expect(asJson.code).toBe(0);
    const { groups } = JSON.parse(asJson.stdout) as { groups: { fprints: string[]; maxDistance: number; fileNames: string[] }[] };
    expect(groups).toHaveLength(1);
    expect([...groups[0]!.fileNames].sort()).toEqual([original, 'garden/near/chelsea-q60.jpg'].sort());
    expect(groups[0]!.fprints).toHaveLength(2);
    const atZero = JSON.parse(tight.stdout) as { groups: { maxDistance: number }[] };
    expect(atZero.groups.length).toBe(groups[0]!.maxDistance === 0 ? 1 : 0);
  });

  it('says on stderr when the batch is not done yet, the groups being those of the images recorded so far', async () => {
    await call('POST', '/v1/batches', { key: client.key, body: { batchId: 'still-open' } });

    const run = await icecat(['similar', 'still-open'], client.key);

    expect(run).toMatchObject({ code: 0, stdout: 'no near-duplicate groups\n' });
    expect(run.stderr).toBe('batch still-open is open: these are the groups of the images recorded so far\n');
  });

  it("refuses --max-distance 25 (past the API's 24) as a usage error (exit 1) without asking the API", async () => {
    const run = await icecat(['similar', BATCH, '--max-distance', '25'], client.key);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/--max-distance.*must be a whole number from 0 to 24/);
  });

  it("answers another client's batch with not found, exit 1", async () => {
    const other = await newClient('cli-tools-other');

    const run = await icecat(['similar', BATCH], other.key);

    expect(run).toMatchObject({ code: 1, stdout: '', stderr: `icecat: batch ${BATCH} not found\n` });
  });
});

describe('icecat delete', () => {
  it('erases the batch; status then exits 1 saying it is not found', async () => {
    const deleted = await icecat(['delete', BATCH, '--json'], client.key);
    const status = await icecat(['status', BATCH], client.key);
    const again = await icecat(['delete', BATCH], client.key);

    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ batchId: BATCH, deleted: true });
    expect(status).toMatchObject({ code: 1, stdout: '', stderr: `icecat: batch ${BATCH} not found\n` });
    expect(again).toMatchObject({ code: 1, stderr: `icecat: batch ${BATCH} not found\n` });
  });
});
