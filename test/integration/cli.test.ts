// The `icecat` CLI as a user runs it (node bin/icecat.js, a separate process) against the local stack: a folder with
// sub-folders, a duplicate and bad files; the JSON, the table, the progress on a terminal and in a pipe; a dry run; a
// wrong key. Its environment holds no AWS credentials: the CLI needs only the API's URL and key.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { postForm } from '../../lib/cli/form-upload';
import { aws, stackEnv, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat, icecatOnTerminal, type Run } from '../helpers/cli';

const FIXTURES = path.join(__dirname, '..', 'fixtures');

/** Keys of every object the client has under any prefix. */
async function objectsOf(clientId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of ['uploads', 'processed', 'duplicates', 'failed']) {
    const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: stackEnv('BUCKET_NAME'), Prefix: `${prefix}/${clientId}/` }));
    keys.push(...(out.Contents ?? []).map((o) => o.Key ?? ''));
  }
  return keys;
}

let workDir: string;
let photos: string;

/**
 * photos/cats/chelsea.png (a cat) and photos/cats/again/chelsea.png (the same pixels), photos/kitchen/coffee.png,
 * photos/broken.jpg (text named .jpg: fails in the service), and files refused before upload: photos/empty.jpg (0
 * bytes), photos/notes.txt (not an image), photos/huge.jpg (over the API's 10 MiB test cap). photos/loop links back up.
 */
function makePhotos(): void {
  workDir = mkdtempSync(path.join(tmpdir(), 'icecat-cli-'));
  photos = path.join(workDir, 'photos');
  mkdirSync(path.join(photos, 'cats', 'again'), { recursive: true });
  mkdirSync(path.join(photos, 'kitchen'));
  copyFileSync(path.join(FIXTURES, 'chelsea.png'), path.join(photos, 'cats', 'chelsea.png'));
  copyFileSync(path.join(FIXTURES, 'chelsea.png'), path.join(photos, 'cats', 'again', 'chelsea.png'));
  copyFileSync(path.join(FIXTURES, 'coffee.png'), path.join(photos, 'kitchen', 'coffee.png'));
  writeFileSync(path.join(photos, 'broken.jpg'), 'this is not a JPEG');
  writeFileSync(path.join(photos, 'empty.jpg'), '');
  writeFileSync(path.join(photos, 'notes.txt'), 'holiday notes');
  writeFileSync(path.join(photos, 'huge.jpg'), '');
  truncateSync(path.join(photos, 'huge.jpg'), 10 * 1024 * 1024 + 1);
  symlinkSync('..', path.join(photos, 'loop'));
}

const NOT_UPLOADED = [
  { file: 'photos/empty.jpg', code: 'EmptyFile' },
  { file: 'photos/huge.jpg', code: 'FileTooLarge' },
  { file: 'photos/notes.txt', code: 'NotAnImage' },
];

beforeAll(makePhotos);
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('icecat upload --wait --json of a folder with sub-folders, a duplicate and bad files', () => {
  let client: TestClient;
  let run: Run;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let result: any;

  beforeAll(async () => {
    client = await newClient('cli');
    run = await icecat(['upload', photos, '--wait', '--json', '--debug', '--concurrency', '3'], client.key);
    result = JSON.parse(run.stdout);
  }, 120_000);

  it('exits 2: some files failed', () => {
    expect(run.code).toBe(2);
  });

  it('prints the done batch with exact counters', () => {
    expect(result.batch).toMatchObject({
      status: 'done',
      counts: { total: 4, success: 2, fail: 1, duplicate: 1, cats: 1 },
      debug: true,
    });
  });

  it('prints every image, named by its folder path, the failure with its code', () => {
    const byName = Object.fromEntries(result.images.map((i: { fileName: string }) => [i.fileName, i]));

    expect(Object.keys(byName).sort()).toEqual(expect.arrayContaining(['photos/broken.jpg', 'photos/kitchen/coffee.png']));
    expect(result.images).toHaveLength(3);
    const cat = result.images.find((i: { isCat: boolean }) => i.isCat);
    expect(['photos/cats/chelsea.png', 'photos/cats/again/chelsea.png']).toContain(cat.fileName);
    expect(cat.duplicates).toBe(1);
    expect(byName['photos/broken.jpg']).toMatchObject({ status: 'fail', error: { code: 'NotAnImage' } });
    expect(byName['photos/kitchen/coffee.png']).toMatchObject({ status: 'success', isCat: false });
  });

  it('lists the files that never left the machine, with their reasons', () => {
    expect(result.notUploaded.map((p: { file: string; error: { code: string } }) => ({ file: p.file, code: p.error.code }))).toEqual(
      NOT_UPLOADED,
    );
  });

  it('reports progress as plain lines on a piped stderr, and the skipped loop', () => {
    // The estimate counts huge.jpg, which the API then refuses.
    expect(run.stderr).toMatch(/^uploading 5 files \(11\.4 MB\)$/m);
    expect(run.stderr).toMatch(/^uploaded 4\/4 files, /m);
    expect(run.stderr).toMatch(/^classified: done$/m);
    expect(run.stderr).toMatch(/skipped .*photos\/loop\/photos: symlink-loop/);
    expect(run.stderr).not.toContain('\x1b[');
  });

  it('leaves the batch readable by status, images --cats and logs', async () => {
    const batchId = result.batch.batchId as string;

    const status = await icecat(['status', batchId], client.key);
    const cats = await icecat(['images', batchId, '--cats', '--json'], client.key);
    const logs = await icecat(['logs', batchId], client.key);

    expect(status).toMatchObject({ code: 0 });
    expect(status.stdout).toMatch(/^status: +done$/m);
    expect(JSON.parse(cats.stdout).items.map((i: { isCat: boolean }) => i.isCat)).toEqual([true]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain('photos/kitchen/coffee.png');
  });

  it('answers an unknown batch with the API’s message and exit 1', async () => {
    const run404 = await icecat(['status', 'no-such-batch'], client.key);

    expect(run404.code).toBe(1);
    expect(run404.stderr).toBe('icecat: batch no-such-batch not found\n');
  });
});

describe('icecat upload --wait on a terminal', () => {
  let run: Run;

  beforeAll(async () => {
    const client = await newClient('cli-tty');
    run = await icecatOnTerminal(['upload', photos, '--wait'], client.key);
  }, 120_000);

  it('exits 2', () => {
    expect(run.code).toBe(2);
  });

  it('draws live progress bars: files and bytes uploaded, then files classified', () => {
    expect(run.stdout).toMatch(/uploading +[█░=-]+ 4\/4 files \| [\d.]+ [KM]B\/[\d.]+ [KM]B \| [\d.]+ files\/s/);
    expect(run.stdout).toMatch(/classifying +[█░=-]+ 4\/4 files/);
    expect(run.stdout).toContain('\x1b[');
  });

  it('ends with the table: file, status, cat, top labels, duplicate of', () => {
    const lines = run.stdout.split(/\r?\n/);
    const header = lines.findIndex((l) => /^FILE +STATUS +CAT +TOP LABELS +DUPLICATE OF +ERROR$/.test(l));
    const rows = lines.slice(header + 1, header + 8).map((l) => l.split(/ {2,}/));

    expect(header).toBeGreaterThanOrEqual(0);
    expect(rows.map((r) => [r[0], r[1]])).toEqual([
      ['photos/broken.jpg', 'fail'],
      ['photos/cats/again/chelsea.png', expect.stringMatching(/^(success|duplicate)$/)],
      ['photos/cats/chelsea.png', expect.stringMatching(/^(success|duplicate)$/)],
      ['photos/empty.jpg', 'fail'],
      ['photos/huge.jpg', 'fail'],
      ['photos/kitchen/coffee.png', 'success'],
      ['photos/notes.txt', 'fail'],
    ]);
    const chelseas = rows.slice(1, 3);
    expect(chelseas.map((r) => r[1]).sort()).toEqual(['duplicate', 'success']);
    expect(chelseas.find((r) => r[1] === 'success')?.[2]).toMatch(/^yes/);
    // DUPLICATE OF: the copy names the file its pixels were first uploaded as; an original names none.
    const original = chelseas.find((r) => r[1] === 'success')!;
    const copy = chelseas.find((r) => r[1] === 'duplicate')!;
    expect(copy[4]).toBe(original[0]);
    expect(rows.filter((r) => r !== copy).map((r) => r[4] ?? '')).not.toContain(expect.stringMatching(/^photos\//));
    expect(run.stdout).not.toContain('(not listed)');
    expect(lines.find((l) => l.startsWith('photos/notes.txt'))).toMatch(/NotAnImage: not an image/);
    expect(run.stdout).toMatch(/^batch \S+: done; 4 files uploaded .*; 2 success, 1 duplicate, 1 fail, 1 cat; 3 not uploaded/m);
  });
});

describe('icecat upload -q --json of a folder with files the walk must skip', () => {
  it('lists a broken link and a name that is not UTF-8 under notUploaded, and exits 2', async () => {
    const client = await newClient('cli-skips');
    // Not under workDir: photos/loop links back up to it.
    const folder = path.join(mkdtempSync(path.join(tmpdir(), 'icecat-cli-skips-')), 'skips');
    mkdirSync(folder);
    copyFileSync(path.join(FIXTURES, 'coffee.png'), path.join(folder, 'coffee.png'));
    symlinkSync('gone.png', path.join(folder, 'dangling.png'));
    writeFileSync(Buffer.concat([Buffer.from(path.join(folder, 'caf')), Buffer.from([0xe9]), Buffer.from('.png')]), 'x');

    const run = await icecat(['upload', folder, '-q', '--json'], client.key);

    expect(run.code).toBe(2);
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout);
    expect(result.notUploaded.map((p: { file: string; error: { code: string } }) => [p.file, p.error.code])).toEqual([
      ['skips/caf\\xE9.png', 'InvalidName'],
      ['skips/dangling.png', 'BrokenLink'],
    ]);
    expect(result.batch).toMatchObject({ closed: true, expected: 1 });
    rmSync(path.dirname(folder), { recursive: true, force: true });
  });
});

describe('icecat upload --dry-run', () => {
  it('lists what it would upload and sends nothing', async () => {
    const client = await newClient('cli-dry');

    const run = await icecat(['upload', photos, '--dry-run'], client.key);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^photos\/kitchen\/coffee\.png +would upload/m);
    expect(run.stdout).toMatch(/^photos\/notes\.txt +would not .*NotAnImage/m);
    expect(run.stdout).toMatch(/dry run: would upload 5 files .*; 2 would not be uploaded; nothing was sent/);
    expect(await objectsOf(client.clientId)).toEqual([]);
  });
});

describe('icecat with a wrong key', () => {
  it('exits 1 with a message naming the key, printing nothing on stdout', async () => {
    const run = await icecat(['upload', photos, '--wait'], 'icw_not-a-key');

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^icecat: the API refused the key \(.*\): check ICECAT_API_KEY or --api-key$/m);
  });
});

describe('icecat close, a resumed upload, and batches', () => {
  let client: TestClient;

  beforeAll(async () => {
    client = await newClient('cli-life');
  });

  it('close answers the closed summary of an open batch', async () => {
    const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId: 'to-close' } });

    const run = await icecat(['close', 'to-close', '--json'], client.key);

    expect(created.status).toBe(201);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ batchId: 'to-close', closed: true, status: 'done' });
  });

  it('resumes a named open batch, sending only the files it does not hold yet', async () => {
    // An earlier run declared the four images, sent one, and was cut off: the batch is still open.
    const coffee = path.join(photos, 'kitchen', 'coffee.png');
    const declared = ['kitchen/coffee.png', 'cats/chelsea.png', 'cats/again/chelsea.png', 'broken.jpg'].map((name) => ({
      name: `photos/${name}`,
      contentType: name.endsWith('.png') ? 'image/png' : 'image/jpeg',
      size: statSync(path.join(photos, name)).size,
    }));
    const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId: 'holiday', files: declared } });
    await postForm(created.body.uploads[0], coffee, 'image/png', declared[0]!.size);
    await waitForBridgeIdle();

    const run = await icecat(['upload', photos, '--batch', 'holiday', '--wait', '--json'], client.key);

    expect(run.code).toBe(2);
    const result = JSON.parse(run.stdout);
    // coffee.png once: had it been sent again it would be a second duplicate.
    expect(result.batch).toMatchObject({
      batchId: 'holiday',
      status: 'done',
      closed: true,
      counts: { total: 4, success: 2, fail: 1, duplicate: 1 },
    });
    expect(run.stderr).toMatch(/^uploaded 3\/3 files/m);
  });

  it('batches lists the client’s batches, newest first, as JSON and as a table', async () => {
    const asJson = await icecat(['batches', '--json'], client.key);
    const asTable = await icecat(['batches'], client.key);

    expect(JSON.parse(asJson.stdout).items.map((b: { batchId: string }) => b.batchId)).toEqual(['holiday', 'to-close']);
    const lines = asTable.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^BATCH +STATUS +FILES +OK +FAIL +DUP +CATS +CREATED$/);
    expect(lines[1]).toMatch(/^holiday +done +4\/4 +2 +1 +1 +1 /);
  });
});
