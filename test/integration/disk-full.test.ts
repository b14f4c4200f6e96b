// A full disk is a fault, not a crash (docs/design.md): `npm start` on a data dir on a small tmpfs of its own (we run as
// root; a test that cannot mount one fails, it is never skipped), filled up with a filler file while uploads go on. The
// stand-ins must refuse the writes with their services' errors (S3 InternalError, DynamoDB InternalServerError), the
// process must stay up and say why (log, status page), no half-written file may remain, the CLI must say in one line
// that the service is out of space and which files did not go; once the filler is deleted, every accepted upload must
// end with a record.

import { type ExecFileException, execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { UploadForm } from '../../lib/api/client-contract';
import { ApiClient } from '../../lib/cli/api-client';
import { OutOfSpaceError } from '../../lib/cli/errors';
import { postForm } from '../../lib/cli/form-upload';
import { silentProgress } from '../../lib/cli/progress';
import { readServiceStatus } from '../../lib/cli/service-status';
import { waitUntilDone } from '../../lib/cli/wait';
import { countRecords, recountQuery } from '../../lib/store/batch/counters';
import { toBatch } from '../../lib/store/table/attributes';
import { batchKey } from '../../lib/store/table/schema';
import { controlHeaders } from '../../local/bridge/control-token';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { distinctImages, keysUnder, readBatch, type StackProcess, seededRandom, startStackProcess } from '../helpers/stack-process';

const ROOT = path.join(__dirname, '..', '..');
const BATCH = 'disk-full';
/** Room left by the filler: a few uploads fit, the rest and the ingest's copies do not. */
const SLACK_BYTES = 256 * 1024;
const IMAGES = 12;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const name = (i: number) => `img-${String(i).padStart(2, '0')}.png`;

interface PutOutcome {
  key: string;
  ok: boolean;
  error?: { name: string; status?: number; message: string };
}

async function put(stack: StackProcess, key: string, body: Buffer): Promise<PutOutcome> {
  try {
    await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body, ContentType: 'image/png' }));
    return { key, ok: true };
  } catch (err) {
    const e = err as Error & { $metadata?: { httpStatusCode?: number } };
    return { key, ok: false, error: { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message } };
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** What a write cut short could leave: temporaries, and objects whose three files are not all there. */
function halfWritten(dataDir: string): string[] {
  const files = filesUnder(dataDir).map((f) => path.relative(dataDir, f));
  const problems = files.filter((f) => /\.tmp-[0-9a-f]{8}$|\._S3rver_object\.[0-9a-f]{6}$|\.compact$|\.tmp$/.test(f));
  const objects = new Set(
    files.filter((f) => f.startsWith('s3/') && f.endsWith('._S3rver_object')).map((f) => f.slice(0, -'._S3rver_object'.length)),
  );
  for (const f of files.filter((f) => f.startsWith('s3/') && /\._S3rver_(metadata\.json|object\.md5)$/.test(f))) {
    if (!objects.has(f.replace(/\._S3rver_(metadata\.json|object\.md5)$/, ''))) problems.push(`${f} without its object`);
  }
  for (const o of objects) {
    for (const part of ['._S3rver_metadata.json', '._S3rver_object.md5'])
      if (!files.includes(o + part)) problems.push(`${o} without ${part}`);
  }
  return problems;
}

function icecat(args: string[], apiUrl: string, apiKey: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'icecat.js'), ...args],
      { env: { ...env, ICECAT_API_URL: apiUrl, ICECAT_API_KEY: apiKey, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as ExecFileException).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const statusOf = async (stack: StackProcess) =>
  (await (await fetch(`${stack.bridgeUrl}/status`)).json()) as {
    deadLettered: number;
    disk: { full: boolean; low: boolean; faults: { service: string }[] };
  };

describe('a full data dir (a tmpfs of its own)', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'icecat-disk-'));
  const mountPoint = path.join(work, 'mnt');
  const dataDir = path.join(mountPoint, 'data');
  const filler = path.join(mountPoint, 'filler');
  const filler2 = path.join(mountPoint, 'filler-2');
  const filler3 = path.join(mountPoint, 'filler-3');
  const cliDir = path.join(work, 'photos');
  let stack: StackProcess;
  let apiKey: string;
  let images: Buffer[];
  let mounted = false;
  const outcomes: PutOutcome[] = [];
  /** A presigned POST form handed out before the disk filled, as the CLI and the web app upload. */
  let form: UploadForm;
  const formFile = path.join(work, 'form.png');

  beforeAll(async () => {
    mkdirSync(mountPoint);
    // Must work (CI runs as root): a test that cannot make a small filesystem fails, it does not skip.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mountPoint]);
    mounted = true;
    stack = await startStackProcess(dataDir, path.join(work, 'stack.log'), {
      ICECAT_RECONCILE_INTERVAL_SECONDS: '1',
      ICECAT_RECONCILE_GRACE_SECONDS: '1',
      CLAIM_LEASE_SECONDS: '10',
      // The stack's own dynalite, whose LevelDB lives in the full data dir: with ICECAT_DYNAMODB_ENDPOINT set, that
      // DynamoDB Local keeps its data elsewhere, and a full data dir could not reach it.
      ICECAT_DYNAMODB_ENDPOINT: '',
    });
    apiKey = readFileSync(path.join(dataDir, 'demo-api-key'), 'utf8').trim();
    images = await distinctImages(IMAGES + 3, seededRandom(163));
    mkdirSync(cliDir);
    for (let i = 0; i < 3; i++) writeFileSync(path.join(cliDir, `cli-${i}.png`), images[IMAGES + i] as Buffer);
    writeFileSync(formFile, images[IMAGES] as Buffer);
    const api = new ApiClient({ apiUrl: stack.apiUrl, apiKey });
    const created = await api.createBatch({
      batchId: 'disk-form',
      files: [{ name: 'form.png', contentType: 'image/png', size: (images[IMAGES] as Buffer).length }],
    });
    form = created.uploads[0] as UploadForm;
  }, 120_000);

  afterAll(async () => {
    if (stack) {
      stack.signal('SIGTERM');
      const kill = setTimeout(() => stack.signal('SIGKILL'), 20_000);
      await stack.exited;
      clearTimeout(kill);
      stack.s3.destroy();
    }
    if (mounted) execFileSync('umount', ['-l', mountPoint]);
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('warns at start that the data dir has little space', () => {
    expect(stack.log()).toMatch(/warning: only [\d.]+ MiB free of [\d.]+ MiB for .*data/);
    expect(stack.log()).toMatch(/Disk space +LOW/);
  });

  it('refuses writes with each service’s error, stays up and says why, and leaves nothing half-written', async () => {
    const { bavail, bsize } = statfsSync(mountPoint);
    execFileSync('fallocate', ['-l', String(bavail * bsize - SLACK_BYTES), filler]);

    for (let i = 0; i < IMAGES; i++) outcomes.push(await put(stack, `uploads/demo/${BATCH}/${name(i)}`, images[i] as Buffer));
    const refused = outcomes.filter((o) => !o.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) {
      expect(o.error).toEqual({ name: 'InternalError', status: 500, message: expect.stringMatching(/out of disk space/) });
    }

    // The CLI's upload through its form: told by S3 that it is out of space, not a retry.
    await expect(postForm(form, formFile, 'image/png', (images[IMAGES] as Buffer).length)).rejects.toThrow(OutOfSpaceError);

    // Whatever the refused writes gave back since (their temporaries removed) is taken again, so the probe below
    // meets a full disk whatever the timing of the stack's own writes.
    const left = statfsSync(mountPoint);
    if (left.bavail * left.bsize > 64 * 1024) execFileSync('fallocate', ['-l', String(left.bavail * left.bsize - 64 * 1024), filler2]);
    const dynamodb = localDynamoClient(stack.dynamodbUrl, { maxAttempts: 1 });
    const probe = { batch_id: { S: 'disk-probe' }, img_fprint: { S: 'probe' }, filler: { S: 'x'.repeat(300_000) } };
    await expect(dynamodb.send(new PutItemCommand({ TableName: LOCAL_NAMES.table, Item: probe }))).rejects.toMatchObject({
      name: 'InternalServerError',
      $metadata: { httpStatusCode: 500 },
    });
    dynamodb.destroy();
    // The probe's slack taken too: a dead letter (a few hundred bytes) would fit in it, and the check below is that a
    // message the ingest cannot finish stays in the journal while no letter can be written.
    const slack = statfsSync(mountPoint);
    if (slack.bavail > 0) execFileSync('fallocate', ['-l', String(slack.bavail * slack.bsize), filler3]);

    // The CLI: the API cannot record the batch (its store is full): one line names the files that did not go.
    const cli = await icecat(['upload', cliDir, '--batch', 'disk-cli'], stack.apiUrl, apiKey);
    expect(cli.code).toBe(2);
    const lines = cli.stderr.split('\n').filter((l) => /out of disk space/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/3 files did not go: photos\/cli-0\.png, photos\/cli-1\.png, photos\/cli-2\.png/);

    // The ingest meanwhile tries the accepted uploads (its copies are refused): still up, and saying why.
    await sleep(5000);
    expect(stack.child.exitCode).toBeNull();
    expect(stack.child.signalCode).toBeNull();
    const status = await statusOf(stack);
    // Nothing was given up on: a message the ingest could not finish stays in the journal (its dead letter cannot be written).
    expect(status.deadLettered).toBe(0);
    expect(status.disk.full).toBe(true);
    expect(status.disk.faults.map((f) => f.service)).toEqual(expect.arrayContaining(['s3', 'dynamodb']));
    const page = await (await fetch(`${stack.bridgeUrl}/status.html`)).text();
    expect(page).toContain('Out of disk space');
    const api = await fetch(`${stack.apiUrl}/v1/batches`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(api.status).toBe(200);
    expect(stack.log()).toMatch(/\[s3\] out of space in .*: writes are refused/);
    expect(stack.log()).toMatch(/\[dynamodb\] out of space in /);
    expect(stack.log()).not.toMatch(/uncaught|LEVEL_IO_ERROR.*\n\s+at /i);

    // `icecat upload --wait` on a batch that cannot move: one line naming the lack of space, then on until its timeout.
    const notes: string[] = [];
    const waited = waitUntilDone(
      new ApiClient({ apiUrl: stack.apiUrl, apiKey }),
      'disk-form',
      1,
      true,
      { ...silentProgress, note: (l) => notes.push(l) },
      100,
      60_000,
      {
        stallMs: 300,
        timeoutMs: 3_000,
        status: () => readServiceStatus(`${stack.bridgeUrl}/status`),
      },
    );
    await expect(waited).rejects.toThrow(
      /gave up waiting after 3 s \(--wait-timeout\): batch disk-form is open, 0 of 1 classified; the service is out of disk space/,
    );
    expect(notes[0]).toMatch(
      /^nothing has moved for \d+ s \(0 of 1 classified\): the service is out of disk space in .*data \(writes refused: .*dynamodb \d+/,
    );

    expect(halfWritten(dataDir)).toEqual([]);
    // A refused upload left nothing behind.
    const stored = await keysUnder(stack.s3, stack.bucket, `uploads/demo/${BATCH}/`);
    for (const o of refused) expect(stored).not.toContain(o.key);
  }, 120_000);

  it('converges once space returns: every accepted upload ends with a record, refused ones go on a second try', async () => {
    rmSync(filler);
    rmSync(filler2, { force: true });
    rmSync(filler3, { force: true });
    const accepted = outcomes.filter((o) => o.ok).map((o) => path.basename(o.key));
    const refused = outcomes.filter((o) => !o.ok);
    for (const o of refused)
      expect(await put(stack, o.key, images[Number(/img-(\d+)/.exec(o.key)?.[1])] as Buffer)).toMatchObject({ ok: true });
    await postForm(form, formFile, 'image/png', (images[IMAGES] as Buffer).length);
    const cli = await icecat(['upload', cliDir, '--batch', 'disk-cli'], stack.apiUrl, apiKey);
    expect(cli.stderr).not.toMatch(/out of disk space/);
    expect(cli.code).toBe(0);

    await fetch(`${stack.bridgeUrl}/reconcile`, { method: 'POST', headers: controlHeaders(dataDir) });
    const until = Date.now() + 150_000;
    let names: string[];
    let cliNames: string[];
    let formNames: string[];
    for (;;) {
      const state = await readBatch(stack, apiKey, BATCH);
      names = (state?.images ?? []).map((i) => i.fileName ?? '').sort();
      cliNames = ((await readBatch(stack, apiKey, 'disk-cli'))?.images ?? []).map((i) => i.fileName ?? '').sort();
      formNames = ((await readBatch(stack, apiKey, 'disk-form'))?.images ?? []).map((i) => i.fileName ?? '');
      const left = await keysUnder(stack.s3, stack.bucket, 'uploads/');
      if ((names.length === IMAGES && cliNames.length === 3 && formNames.length === 1 && left.length === 0) || Date.now() > until) break;
      await sleep(1000);
    }
    expect(accepted.length).toBeGreaterThan(0);
    for (const file of accepted) expect(names).toContain(file);
    expect(names).toEqual(Array.from({ length: IMAGES }, (_, i) => name(i)));
    expect(cliNames).toEqual(['photos/cli-0.png', 'photos/cli-1.png', 'photos/cli-2.png']);
    expect(formNames).toEqual(['form.png']);
    expect(await keysUnder(stack.s3, stack.bucket, 'uploads/')).toEqual([]);

    // Each batch's counters equal what its records add up to, whichever of a record's two writes the disk refused.
    const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.dynamodbUrl, { maxAttempts: 1 }));
    const countsOf = async (batchId: string) => {
      const records = await ddb.send(new QueryCommand(recountQuery(LOCAL_NAMES.table, 'demo', batchId)));
      const summary = await ddb.send(
        new GetCommand({ TableName: LOCAL_NAMES.table, Key: batchKey('demo', batchId), ConsistentRead: true }),
      );
      return { counters: toBatch(summary.Item as never).counts, records: countRecords((records.Items ?? []) as never) };
    };
    for (const batchId of [BATCH, 'disk-cli', 'disk-form']) {
      // The last record's counter move may still be on its way.
      let seen = await countsOf(batchId);
      for (
        const stop = Date.now() + 30_000;
        JSON.stringify(seen.counters) !== JSON.stringify(seen.records) && Date.now() < stop;
        seen = await countsOf(batchId)
      )
        await sleep(500);
      expect({ batchId, counters: seen.counters }).toEqual({ batchId, counters: seen.records });
    }
    ddb.destroy();

    const dynamodb = localDynamoClient(stack.dynamodbUrl, { maxAttempts: 1 });
    await dynamodb.send(
      new PutItemCommand({ TableName: LOCAL_NAMES.table, Item: { batch_id: { S: 'disk-probe' }, img_fprint: { S: 'probe' } } }),
    );
    dynamodb.destroy();
    expect((await statusOf(stack)).disk.full).toBe(false);
    expect(stack.child.exitCode).toBeNull();
    expect(halfWritten(dataDir)).toEqual([]);
  }, 240_000);
});
