// `icecat import`, `icecat report` and `icecat retry` run as a user runs them (node bin/icecat.js, no AWS variables)
// against the local stack: a prefix of a second bucket with a repeat, a file that is no image and a broken JPEG imported
// with --wait (the listing's progress, exit 2 for the broken one), the same --batch again followed rather than refused,
// a manifest, a source outside the client's (403, said plainly), the completion report to stdout and to a file, a retry
// of the failed image, a batch of uploads (no report, no retry) and an import waiting for the quota's reset.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { defaultClientLimits } from '../../functions/config';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { aws, stackEnv, uniqueId } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat, icecatOnTerminal } from '../helpers/cli';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const LIBRARY: Record<string, Buffer> = {
  'photos/chelsea.png': fixture('chelsea.png'),
  'photos/again/chelsea copy.png': fixture('chelsea.png'),
  'photos/coffee.png': fixture('coffee.png'),
  'photos/notes.txt': Buffer.from('not an image'),
  'photos/broken.jpg': Buffer.from('this is not a jpeg'),
  'good/rocket.jpg': fixture('rocket.jpg'),
};

const library = uniqueId('cli-lib').toLowerCase().replace(/_/g, '-');
let client: TestClient;
let workDir: string;
/** `icecat import s3://…/photos/ --batch library --wait`, run once. */
let imported: { code: number; stdout: string; stderr: string };

const allow = (clientId: string, uris: string[]) =>
  new ClientSourcesStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }).change(clientId, uris, []);

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), 'icecat-cli-import-'));
  await aws().s3.send(new CreateBucketCommand({ Bucket: library }));
  for (const [key, body] of Object.entries(LIBRARY)) await aws().s3.send(new PutObjectCommand({ Bucket: library, Key: key, Body: body }));
  const csv = `${library},photos/again/chelsea%20copy.png\n${library},good/rocket.jpg\n`;
  await aws().s3.send(new PutObjectCommand({ Bucket: library, Key: 'manifests/two.csv', Body: csv }));
  client = await newClient('cli-imp');
  await allow(client.clientId, [`s3://${library}/photos/`, `s3://${library}/good/`, `s3://${library}/manifests/`]);
  imported = await icecat(['import', `s3://${library}/photos/`, '--batch', 'library', '--wait'], client.key);
}, 120_000);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('icecat import of a prefix with --wait', () => {
  it('ends with exit 2 for the broken JPEG, the import listed and every image accounted for', () => {
    expect([imported.code, imported.stderr]).toEqual([2, expect.any(String)]);
    const lines = imported.stdout.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `source:    s3://${library}/photos/`,
        'import:    listed',
        'listed:    5',
        'sent:      4',
        'skipped:   1',
        'status:    done',
        'success:   2',
        'fail:      1',
        'duplicate: 1',
      ]),
    );
    expect(imported.stdout).toContain(
      'batch library: done; 5 keys listed, 4 images sent, 1 skipped; 2 success, 1 duplicate, 1 fail, 1 cat; icecat report library has a row per object',
    );
  });

  it('shows the listing’s progress on stderr, then the classification’s, then what to do about the failure', () => {
    const err = imported.stderr.split('\n');
    expect(err[0]).toBe(`batch library: importing s3://${library}/photos/`);
    expect(err).toContain(`listed s3://${library}/photos/: 5 keys, 4 images sent, 1 skipped (not images by name)`);
    expect(err).toContain('waiting for 4 files to be classified');
    expect(err).toContain('classified: done');
    expect(err.at(-2)).toBe(
      '1 image failed: icecat report library names them (TaskStatus failed, ErrorCode), icecat retry library sends them again',
    );
  });

  it('follows the batch when the same --batch imports the same source again (a lost answer), and refuses another source', async () => {
    const again = await icecat(['import', `s3://${library}/photos/`, '--batch', 'library', '--wait', '--json'], client.key);
    const other = await icecat(['import', `s3://${library}/good/`, '--batch', 'library'], client.key);

    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`batch library already imports s3://${library}/photos/: following it`);
    expect(JSON.parse(again.stdout)).toMatchObject({ batchId: 'library', status: 'done', counts: { total: 4 } });
    expect(other.code).toBe(1);
    expect(other.stderr).toBe(`icecat: you already have a batch library (importing s3://${library}/photos/): choose another --batch\n`);
  });
});

describe('icecat import --wait on a terminal', () => {
  it('redraws the listing line in place, then the classification bar, and ends with exit 0', async () => {
    const run = await icecatOnTerminal(['import', `s3://${library}/good/`, '--wait'], client.key);

    expect(run.code).toBe(0);
    // The pseudo-terminal carries stderr and stdout together; the line is redrawn after an erase (ESC [2K).
    expect(run.stdout).toContain(`\x1b[2Klisted s3://${library}/good/: 1 key, 1 image sent, 0 skipped (not images by name)`);
    expect(run.stdout).toMatch(/classifying .* 1\/1 files/);
    expect(run.stdout).toMatch(/batch \S+: done; 1 key listed, 1 image sent, 0 skipped; 1 success, 0 duplicate, 0 fail, 0 cats/);
  }, 60_000);
});

describe('icecat import of a manifest, and of a source the client may not read', () => {
  it('imports exactly the manifest’s keys and exits 0 when all are classified', async () => {
    const run = await icecat(['import', '--manifest', `s3://${library}/manifests/two.csv`, '--wait', '--json'], client.key);

    expect([run.code, run.stderr.split('\n').at(-2)]).toEqual([0, 'classified: done']);
    const summary = JSON.parse(run.stdout);
    expect(summary.import).toMatchObject({
      state: 'listed',
      listed: 2,
      enqueued: 2,
      skipped: 0,
      source: { manifest: `s3://${library}/manifests/two.csv` },
    });
    expect(summary.counts).toMatchObject({ total: 2, success: 2, fail: 0 });
  }, 60_000);

  it('says plainly that a source outside the client’s is refused (403), nothing listed, and how it is allowed; exit 1', async () => {
    const run = await icecat(['import', `s3://${library}/private/`, '--batch', 'private'], client.key);

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `icecat: s3://${library}/private/ is not among the sources this key may import from (403 source_not_allowed): nothing was ` +
        'listed. The operator allows a source with `npm run client:sources -- <clientId> --allow s3://bucket/prefix/`\n',
    );
    expect((await call('GET', '/v1/batches/private', { key: client.key })).status).toBe(404);
  });
});

describe('icecat report and icecat retry', () => {
  it('streams the completion report: one row per object sent, in S3 Batch Operations’ columns, to stdout or to a file', async () => {
    const file = path.join(workDir, 'report.csv');
    const printed = await icecat(['report', 'library'], client.key);
    const saved = await icecat(['report', 'library', '--out', file], client.key);

    expect(printed.code).toBe(0);
    const rows = printed.stdout
      .trimEnd()
      .split('\n')
      .map((r) => r.split(','));
    expect(rows.map((r) => r[1]).sort()).toEqual([
      'photos/again/chelsea%20copy.png',
      'photos/broken.jpg',
      'photos/chelsea.png',
      'photos/coffee.png',
    ]);
    expect(rows.find((r) => r[1] === 'photos/broken.jpg')).toEqual([
      library,
      'photos/broken.jpg',
      '',
      'failed',
      'NotAnImage',
      '400',
      expect.any(String),
    ]);
    expect(rows.filter((r) => r[3] === 'succeeded')).toHaveLength(3);
    expect([saved.code, saved.stdout]).toEqual([0, '']);
    expect(saved.stderr).toMatch(/^wrote 4 rows, [\d.]+ (B|KB) of the completion report to .*report\.csv\n$/);
    expect(readFileSync(file, 'utf8')).toBe(printed.stdout);
  });

  it('sends again exactly the failed image and, with --wait, follows it to done', async () => {
    const run = await icecat(['retry', 'library', '--wait'], client.key);

    // The broken JPEG fails again: still exit 2, the batch done again with the same counts.
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('sent again 1 failed image of batch library, read where it is');
    expect(run.stdout).toContain('batch library: done; 5 keys listed, 4 images sent, 1 skipped; 2 success, 1 duplicate, 1 fail');
  }, 60_000);

  it('says a batch of uploads has no completion report and nothing to retry (exit 1)', async () => {
    const upload = await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId: 'uploaded', files: [{ name: 'a.png', contentType: 'image/png', size: 100 }] },
    });
    expect(upload.status).toBe(201);

    const report = await icecat(['report', 'uploaded'], client.key);
    const retry = await icecat(['retry', 'uploaded'], client.key);

    expect([report.code, report.stdout, report.stderr]).toEqual([
      1,
      '',
      'icecat: batch uploaded is not an import: it has no completion report (icecat export uploaded has a row per uploaded file)\n',
    ]);
    expect([retry.code, retry.stderr]).toEqual([
      1,
      'icecat: batch uploaded is not an import: only an import’s failed images can be sent again (upload the files again instead)\n',
    ]);
  });
});

describe('icecat import beyond the day’s images', () => {
  it('says it waits for the quota’s reset, and when, until --wait-timeout ends the wait (exit 1)', async () => {
    const capped = await newClient('cli-imp');
    await allow(capped.clientId, [`s3://${library}/photos/`]);
    await new ClientQuotaStore({
      ddb: aws().ddb,
      tableName: stackEnv('TABLE_NAME'),
      defaults: defaultClientLimits(),
      cacheMs: 0,
    }).setLimits(capped.clientId, { maxImagesPerDay: 2 });
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);

    const run = await icecat(['import', `s3://${library}/photos/`, '--batch', 'capped', '--wait', '--wait-timeout', '8'], capped.key);

    expect(run.code).toBe(1);
    const waiting = run.stderr.split('\n').find((l) => l.startsWith('waiting for the quota'));
    expect(waiting).toMatch(
      new RegExp(
        `^waiting for the quota: today's images quota is used up with [0-2] images? sent; ` +
          `the listing goes on at ${midnight.toISOString().replace(/\./g, '\\.')}, losing nothing$`,
      ),
    );
    expect(run.stderr).toMatch(
      /gave up waiting after 8 s \(--wait-timeout\): batch capped is open, waiting for the quota: .*icecat status capped\n$/,
    );
    expect(run.stdout).toContain('import:    waiting-for-quota');
    expect(run.stdout).toContain(`resumes:   ${midnight.toISOString()}`);
  }, 60_000);
});
