// The full-disk trial (docs/local-stack.md, "A full disk"): a local stack whose data dir is a small tmpfs, two batches
// of 100 photos uploaded into it at once until the filesystem is full, then space returned (the tmpfs grown); it
// passes when both batches are done and each batch's counters equal what its records add up to. It mounts a
// filesystem, so it needs root (or CAP_SYS_ADMIN) and is not a bench CI runs:
//   sudo npx tsx bench/full-disk-trial.ts [--size-mb 12] [--photos 100] [--full-seconds 20]
// Beside them `icecat upload --wait` sends a third, small batch, and what it says while the disk is full is kept.
// The result goes to bench/results/full-disk-trial.json and stdout; the exit code is 0 when it passed.

import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import sharp from 'sharp';
import { type Counts, countsCannotBeRight } from '../lib/domain/counts';
import { countRecords, recountQuery } from '../lib/store/batch/counters';
import { BatchStore } from '../lib/store/batch-store';
import { LOCAL_NAMES } from '../local/contract';
import type { DiskState } from '../local/disk-space';
import { localDynamoClient } from '../local/dynamodb/dynamodb';
import { type StackProcess, seededRandom, startStackProcess } from '../test/helpers/stack-process';
import { benchStackEnv } from './on-stack';

const { values: args } = parseArgs({
  options: {
    'size-mb': { type: 'string', default: '12' },
    photos: { type: 'string', default: '100' },
    'full-seconds': { type: 'string', default: '20' },
    'timeout-seconds': { type: 'string', default: '900' },
  },
});
const SIZE_MB = Number(args['size-mb']);
const PHOTOS = Number(args.photos);
/** How long the disk stays full (after the first refused write) before space is returned. */
const FULL_MS = Number(args['full-seconds']) * 1000;
const TIMEOUT_MS = Number(args['timeout-seconds']) * 1000;
const GROWN_MB = 512;
const CLI_PHOTOS = 10;

const log = (line: string) => console.log(`[trial ${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Distinct noise photos (JPEG, 256×256), which compress poorly: each some tens of KB. */
async function photos(n: number, random: () => number): Promise<Buffer[]> {
  const side = 256;
  const out: Buffer[] = [];
  for (let i = 0; i < n; i += 1) {
    const pixels = Buffer.alloc(side * side * 3);
    for (let p = 0; p < pixels.length; p += 1) pixels[p] = Math.floor(random() * 256);
    out.push(
      await sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
        .jpeg({ quality: 85 })
        .toBuffer(),
    );
  }
  return out;
}

async function status(stack: StackProcess): Promise<{ disk?: DiskState; deadLetters?: number } | undefined> {
  try {
    return (await (await fetch(`${stack.bridgeUrl}/status`)).json()) as { disk?: DiskState };
  } catch {
    return undefined;
  }
}

/** Tries `fn` until it succeeds (a refused write, the disk full), every second. */
async function persist<T>(what: string, fn: () => Promise<T>, refusals: { n: number }): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      refusals.n += 1;
      if (refusals.n % 50 === 1) log(`${what} refused (${refusals.n} so far): ${String(err).slice(0, 160)}`);
      await sleep(1000);
    }
  }
}

interface BatchReport {
  batchId: string;
  counts?: Counts;
  records?: Counts;
  done: boolean;
  /** Counters that cannot be right, seen while waiting. */
  impossibleSeen: Counts[];
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'icecat-full-disk-'));
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE_MB}m`, 'tmpfs', dataDir]);
  log(`data dir ${dataDir}: a ${SIZE_MB} MiB tmpfs`);
  let stack: StackProcess | undefined;
  const started = Date.now();
  // Interrupted: the stack stopped and the tmpfs unmounted all the same.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stack?.signal('SIGKILL');
      execFileSync('umount', ['-l', dataDir]);
      rmSync(work, { recursive: true, force: true });
      process.exit(130);
    });
  }
  try {
    stack = await startStackProcess(
      dataDir,
      join(work, 'stack.log'),
      benchStackEnv({ ICECAT_RECONCILE_INTERVAL_SECONDS: '5', ICECAT_RECONCILE_GRACE_SECONDS: '5' }),
    );
    const s = stack;
    const ddb = DynamoDBDocumentClient.from(localDynamoClient(s.dynamodbUrl));
    const store = new BatchStore({ ddb, tableName: LOCAL_NAMES.table, transactions: false });
    const images = await photos(2 * PHOTOS, seededRandom(29));
    const bytes = images.reduce((sum, b) => sum + b.length, 0);
    log(`${images.length} photos, ${(bytes / 1024 / 1024).toFixed(1)} MiB`);

    // The CLI's batch: uploaded with --wait while the others fill the disk; it says why nothing moves after 5 s.
    const cliDir = join(work, 'cli-photos');
    mkdirSync(cliDir);
    for (const [i, photo] of (await photos(CLI_PHOTOS, seededRandom(291))).entries()) writeFileSync(join(cliDir, `cli-${i}.jpg`), photo);
    const cli = new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(__dirname, '..', 'bin', 'icecat.js'), 'upload', cliDir, '--wait', '--wait-timeout', String(TIMEOUT_MS / 1000)],
        {
          env: {
            ...process.env,
            ICECAT_API_URL: s.apiUrl,
            ICECAT_API_KEY: readFileSync(join(dataDir, 'demo-api-key'), 'utf8').trim(),
            ICECAT_BRIDGE_URL: s.bridgeUrl,
            ICECAT_WAIT_STALL_SECONDS: '5',
            NO_COLOR: '1',
          },
        },
        (err, _stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
      );
    });

    const stamp = Date.now().toString(36);
    const batchIds = [`full-a-${stamp}`, `full-b-${stamp}`];
    const refusals = { n: 0 };
    for (const batchId of batchIds) {
      await persist('opening a batch', () => store.openBatch({ clientId: 'demo', batchId, now: Date.now(), retentionDays: 1 }), refusals);
      await persist('closing a batch', () => store.close('demo', batchId, PHOTOS), refusals);
    }

    // The watcher: space comes back FULL_MS after the first refused write.
    let fullAt: number | undefined;
    let grownAt: number | undefined;
    let faultsAtGrow: DiskState['faults'] = [];
    const watcher = (async () => {
      while (grownAt === undefined) {
        const st = await status(s);
        if (st?.disk?.full && fullAt === undefined) {
          fullAt = Date.now();
          log(`disk full: ${st.disk.faults.map((f) => `${f.service} ${f.count} refused`).join(', ')}`);
        }
        if (fullAt !== undefined && Date.now() - fullAt >= FULL_MS) {
          faultsAtGrow = st?.disk?.faults ?? [];
          execFileSync('mount', ['-o', `remount,size=${GROWN_MB}m`, dataDir]);
          grownAt = Date.now();
          log(
            `space returned: the tmpfs grown to ${GROWN_MB} MiB (${faultsAtGrow.map((f) => `${f.service} ${f.count} refused`).join(', ')})`,
          );
        }
        await sleep(500);
      }
    })();

    // Both batches at once, four PUTs each at a time; a refused PUT is sent again until accepted, as a client would.
    let next = 0;
    const order = images.map((_, i) => i);
    const putWorker = async () => {
      for (let i = next++; i < order.length; i = next++) {
        const batchId = batchIds[i % 2] as string;
        const key = `uploads/demo/${batchId}/photo-${String(Math.floor(i / 2)).padStart(3, '0')}.jpg`;
        await persist(
          'a PUT',
          () => s.s3.send(new PutObjectCommand({ Bucket: s.bucket, Key: key, Body: images[i], ContentType: 'image/jpeg' })),
          refusals,
        );
      }
    };
    await Promise.all(Array.from({ length: 8 }, putWorker));
    const uploadedAt = Date.now();
    log(`all ${images.length} uploads accepted (${refusals.n} refusals)`);
    // A disk that never filled: space is "returned" anyway, and the trial says the disk did not fill.
    if (fullAt === undefined) {
      await sleep(30_000);
      fullAt ??= Date.now() - FULL_MS;
    }
    await watcher;

    const reports: BatchReport[] = batchIds.map((batchId) => ({ batchId, done: false, impossibleSeen: [] }));
    const deadline = Date.now() + TIMEOUT_MS;
    let lastLine = '';
    for (;;) {
      for (const r of reports) {
        const batch = await store.getBatch('demo', r.batchId);
        const out = await ddb.send(new QueryCommand(recountQuery(LOCAL_NAMES.table, 'demo', r.batchId)));
        r.counts = batch?.counts;
        r.records = countRecords((out.Items ?? []) as never);
        r.done = batch?.doneAt !== undefined;
        if (r.counts && countsCannotBeRight(r.counts)) r.impossibleSeen.push(r.counts);
      }
      const line = reports
        .map((r) => `${r.batchId}: ${r.done ? 'done' : 'not done'} ${JSON.stringify(r.counts)} records ${JSON.stringify(r.records)}`)
        .join(' | ');
      if (line !== lastLine) log(line);
      lastLine = line;
      const equal = reports.every((r) => JSON.stringify(r.counts) === JSON.stringify(r.records));
      if ((reports.every((r) => r.done) && equal) || Date.now() > deadline) break;
      await sleep(2000);
    }
    const cliRun = await cli;
    log(`icecat upload --wait exited ${cliRun.code}`);
    const passed = reports.every((r) => r.done && JSON.stringify(r.counts) === JSON.stringify(r.records) && r.records?.total === PHOTOS);
    const result = {
      passed,
      sizeMiB: SIZE_MB,
      photos: images.length,
      photoMiB: Number((bytes / 1024 / 1024).toFixed(1)),
      diskFilled: faultsAtGrow.length > 0,
      refusedAtGrow: faultsAtGrow.map((f) => ({ service: f.service, count: f.count })),
      clientPutRefusals: refusals.n,
      secondsToUploadAll: Math.round((uploadedAt - started) / 1000),
      secondsFullBeforeGrow: grownAt && fullAt ? Math.round((grownAt - fullAt) / 1000) : undefined,
      secondsFromGrowToDone: grownAt ? Math.round((Date.now() - grownAt) / 1000) : undefined,
      batches: reports,
      cli: {
        exitCode: cliRun.code,
        stallLines: cliRun.stderr
          .split('\n')
          .filter((l) => /nothing has moved|out of disk space/.test(l))
          .slice(0, 5),
      },
      reconcileLines: s
        .log()
        .split('\n')
        .filter((l) => /recounted batches|recounting/.test(l))
        .slice(0, 10),
    };
    console.log(JSON.stringify(result, null, 2));
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    writeFileSync(
      join(__dirname, 'results', 'full-disk-trial.json'),
      `${JSON.stringify({ at: new Date().toISOString(), ...result }, null, 2)}\n`,
    );
    if (!passed) console.error(s.log().slice(-4000));
    return passed ? 0 : 1;
  } finally {
    if (stack) {
      stack.signal('SIGTERM');
      const killed = setTimeout(() => stack?.signal('SIGKILL'), 20_000);
      await stack.exited;
      clearTimeout(killed);
      stack.s3.destroy();
    }
    execFileSync('umount', [dataDir]);
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
