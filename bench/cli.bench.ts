// `icecat upload` against the local S3: files per second for 1,000 files of ~100 KB beside raw SDK PutObject calls
// at the same concurrency (and `aws s3 cp --recursive` where the AWS CLI is installed), alternating rounds in one run
// (goal: CLI >= 0.8x the SDK); and the CLI's peak RSS for 1,000 and 10,000 files (goal: <= 150 MB, flat in the
// number of files). The stack runs the real API and S3 with a no-op ingest handler: this measures the upload path,
// not classification (the pipeline bench does that).
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { TaskPool } from '../lib/cli/pool';
import { startStack } from '../local/stack/stack';
import { headline as figure, type Headline, isSmoke, median, pick, round, sized } from './stats';

const ROOT = join(__dirname, '..');
const BIN = join(ROOT, 'bin', 'icecat.js');
const FILES = sized(1_000, 40);
const FILE_BYTES = 100 * 1024;
const CONCURRENCY = 8;
const ROUNDS = sized(3, 1);
const RSS_SIZES = sized([1_000, 10_000], [40, 80]);

/** n files of ~100 KB (random bytes, so nothing compresses), in sub-folders of 100. */
function makeFolder(parent: string, n: number): string {
  const dir = join(parent, `photos-${n}`);
  for (let i = 0; i < n; i++) {
    const sub = join(dir, `part-${String(Math.floor(i / 100)).padStart(3, '0')}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `img-${String(i).padStart(5, '0')}.jpg`), randomBytes(FILE_BYTES - 512 + (i % 1024)));
  }
  return dir;
}

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));

interface CliRun {
  seconds: number;
  peakRssMb: number;
  code: number;
  stderr: string;
}

function runCli(folder: string, env: NodeJS.ProcessEnv, work: string): Promise<CliRun> {
  const rssFile = join(work, `rss-${Date.now()}`);
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', join(__dirname, 'cli-rss.cjs'), BIN, 'upload', folder, '--quiet', '--concurrency', String(CONCURRENCY)],
      { env: { ...env, ICECAT_BENCH_RSS_FILE: rssFile }, maxBuffer: 256 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        const seconds = (performance.now() - started) / 1000;
        resolve({
          seconds,
          peakRssMb: round(Number(readFileSync(rssFile, 'utf8')) / 1024, 1),
          code: err ? Number(err.code ?? 1) : 0,
          stderr,
        });
      },
    );
  });
}

function awsCliAvailable(): boolean {
  return spawnSync('aws', ['--version'], { stdio: 'ignore' }).status === 0;
}

export default async function run(): Promise<Record<string, unknown>> {
  const work = mkdtempSync(join(tmpdir(), 'icecat-bench-cli-'));
  const stack = await startStack({
    dataDir: join(work, 'data'),
    quiet: true,
    detector: false,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
    ingestHandler: async () => ({ batchItemFailures: [] }),
  });
  try {
    const { createClients } = await import('../lib/aws/clients');
    const { loadAwsClientSettings } = await import('../lib/config');
    const s3 = createClients(loadAwsClientSettings()).s3;
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_'))),
      ICECAT_API_URL: stack.endpoints.api,
      ICECAT_API_KEY: stack.demoApiKey,
    };
    const folder = makeFolder(work, FILES);
    const paths = filesUnder(folder);

    const sdkRound = async (round: number): Promise<number> => {
      const pool = new TaskPool(CONCURRENCY);
      const started = performance.now();
      for (const [i, p] of paths.entries()) {
        await pool.add(async () => {
          await s3.send(
            new PutObjectCommand({
              Bucket: stack.bucket,
              Key: `bench-sdk/${round}/${i}.jpg`,
              Body: await readFile(p),
              ContentType: 'image/jpeg',
            }),
          );
        });
      }
      await pool.drain();
      return (performance.now() - started) / 1000;
    };

    // A smoke run leaves the AWS CLI out: a comparison, and seconds of Python start-up each round.
    const withAwsCli = !isSmoke() && awsCliAvailable();
    const awsConfig = join(work, 'aws-config');
    writeFileSync(awsConfig, `[default]\nregion = us-east-1\ns3 =\n  max_concurrent_requests = ${CONCURRENCY}\n`);
    // Asynchronously: the local S3 answers from this very process.
    const awsCliRound = (round: number): Promise<number> => {
      const started = performance.now();
      return new Promise((resolve, reject) =>
        execFile(
          'aws',
          [
            's3',
            'cp',
            folder,
            `s3://${stack.bucket}/bench-awscli/${round}/`,
            '--recursive',
            '--only-show-errors',
            '--endpoint-url',
            stack.endpoints.s3,
          ],
          { env: { ...process.env, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_CONFIG_FILE: awsConfig } },
          (err, _out, stderr) => (err ? reject(new Error(`aws s3 cp failed: ${stderr}`)) : resolve((performance.now() - started) / 1000)),
        ),
      );
    };

    // Warm-up: the local S3's first writes and the SDK's first connections.
    await sdkRound(-1);
    const cli: number[] = [];
    const sdk: number[] = [];
    const awsCli: number[] = [];
    const cliRss: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const c = await runCli(folder, env, work);
      if (c.code !== 0) throw new Error(`icecat upload exited ${c.code}: ${c.stderr}`);
      cli.push(c.seconds);
      cliRss.push(c.peakRssMb);
      sdk.push(await sdkRound(r));
      if (withAwsCli) awsCli.push(await awsCliRound(r));
    }
    const filesPerS = (seconds: number[]) => round(FILES / median(seconds), 1);

    const rss: Record<string, unknown>[] = [];
    for (const n of RSS_SIZES) {
      const dir = n === FILES ? folder : makeFolder(work, n);
      const c = await runCli(dir, env, work);
      if (c.code !== 0) throw new Error(`icecat upload of ${n} files exited ${c.code}: ${c.stderr}`);
      rss.push({ files: n, peak_rss_mb: c.peakRssMb, seconds: round(c.seconds, 1), files_per_s: round(n / c.seconds, 1) });
      if (n !== FILES) rmSync(dir, { recursive: true, force: true });
    }

    return {
      setup: `${FILES} files of ~${FILE_BYTES / 1024} KB, concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds, medians; local S3 (s3rver) behind the local API with a no-op ingest`,
      cli_upload: {
        files_per_s: filesPerS(cli),
        seconds: cli.map((s) => round(s, 2)),
        includes: 'process start, folder walk, batch creation, one form request per 100 files, close',
      },
      sdk_put_object: { files_per_s: filesPerS(sdk), seconds: sdk.map((s) => round(s, 2)) },
      ...(withAwsCli
        ? { aws_s3_cp_recursive: { files_per_s: filesPerS(awsCli), seconds: awsCli.map((s) => round(s, 2)) } }
        : { aws_s3_cp_recursive: 'AWS CLI not installed' }),
      cli_vs_sdk_files_per_s: round(median(sdk) / median(cli), 2),
      goal_cli_vs_sdk: '>= 0.8',
      peak_rss: rss,
      peak_rss_rounds_1000_mb: cliRss,
      goal_peak_rss_mb: '<= 150, flat in the number of files',
    };
  } finally {
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  const rss = (pick(r, 'peak_rss') ?? []) as { files: number; peak_rss_mb: number }[];
  const first = rss[0];
  const last = rss[rss.length - 1];
  return [
    figure('CLI files/s ÷ SDK PutObject files/s', pick(r, 'cli_vs_sdk_files_per_s'), '>= 0.8'),
    figure(`CLI peak RSS MB, ${last?.files ?? '?'} files`, last?.peak_rss_mb, '<= 150'),
    figure(
      `peak RSS, ${last?.files ?? '?'} ÷ ${first?.files ?? '?'} files (flat)`,
      first && last ? round(last.peak_rss_mb / first.peak_rss_mb, 2) : undefined,
    ),
  ];
}
