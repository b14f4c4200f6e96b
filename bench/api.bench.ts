// GET /v1/batches/{id}/images (20 items) under 64 concurrent connections over loopback, beside a raw SDK Query for
// the same items in the same run, with the table holding ~20, 1,000 and 100,000 items.
// Goals: API p99 <= 1.5x the raw query's; latency flat as the table grows (100k vs 1k <= 1.2x).
// Then one client's cost on another: a quiet client's GET /v1/batches/{id}/images at 20 requests/s, alone and while
// another client floods POST /v1/fingerprints:known (1,000 fingerprints a call, 8 loops, each waiting as a refusal's
// Retry-After says: at its rate limit of 50 tokens/s, one token per 5 fingerprints). Goal: the quiet client's p99
// during the flood <= 3x its p99 alone.
//
// Load generator: autocannon (npm, pinned devDependency). It installs wherever `npm ci` runs (CI included) with no
// apt step, runs in-process, and reports each response's hrtime latency, so the API's and the raw query's
// percentiles are computed by the same code from per-request samples. wrk (Debian) spends less CPU per request, but
// would need installing on every machine and gives only a printed distribution. Its JS cost on this 2-core machine
// is why DynamoDB (dynalite) and the API (HTTP gateway + handler) each run in their own child process, and why the
// raw SDK client runs in this process beside autocannon: both clients pay their overhead in the same place.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import { defaultClientLimits } from '../functions/config';
import { registerApiKey } from '../lib/auth/register';
import { batchResultsRequest } from '../lib/store/batch/images';
import { ClientQuotaStore } from '../lib/store/client/quota';
import { Registrations } from '../lib/store/client/registrations';
import { knownItemRequest } from '../lib/store/image/record';
import { pageRequest } from '../lib/store/table/query';
import { BATCH_SK, batchPartition, statusTs } from '../lib/store/table/schema';
import { headline as figure, type Headline, median, percentile, pick, round as round3, sized } from './stats';

const CONNECTIONS = 64;
const BATCH_ITEMS = 20;
const ROUNDS = sized(5, 1);
const ROUND_SECONDS = sized(3, 0.5);
const WARMUP_SECONDS = sized(3, 0);
// In a smoke run the "1k" and "100k" figures are the 100- and 200-item tables'.
const TABLE_SIZES = sized([BATCH_ITEMS, 1_000, 100_000], [BATCH_ITEMS, 100, 200]);
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

// ---------------------------------------------------------------------------------------------------------------
// Child processes: `--serve dynamodb <dataDir>` and `--serve api <dataDir> <dynamodbUrl>`

async function serve(kind: string, dataDir: string, dynamodbUrl?: string): Promise<void> {
  let close: () => Promise<void>;
  let ready: Record<string, unknown>;
  if (kind === 'dynamodb') {
    const { startLocalDynamoDB } = await import('../local/dynamodb/dynamodb');
    const db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir, quiet: true });
    close = db.close;
    ready = { url: db.url, table: db.table.name };
  } else {
    const { startStack } = await import('../local/stack/stack');
    const stack = await startStack({
      dataDir,
      quiet: true,
      detector: false,
      dynamodbEndpoint: dynamodbUrl,
      ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
    });
    close = stack.stop;
    ready = { url: stack.endpoints.api, key: stack.demoApiKey, clientId: 'demo' };
  }
  process.stdout.write(`${JSON.stringify({ ready })}\n`);
  process.once('SIGTERM', () => void close().then(() => process.exit(0)));
}

export function startChild(args: string[]): Promise<{ child: ChildProcess; ready: Record<string, string> }> {
  const child = spawn(
    process.execPath,
    [
      ...process.execArgv,
      ...(process.env.BENCH_CPU_PROF && args[0] === 'api' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      __filename,
      '--serve',
      ...args,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    },
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{"ready"')) return;
      resolve({ child, ready: (JSON.parse(line) as { ready: Record<string, string> }).ready });
    });
    child.once('exit', (code) => reject(new Error(`bench server ${args[0]} exited with ${code}`)));
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

// ---------------------------------------------------------------------------------------------------------------
// Measurement

export interface Sampled {
  latencies: number[];
  seconds: number;
  errors: number;
}

/** Latencies of rounds taken together: p50, p99 and the rate. */
export function summarise(samples: Sampled[]) {
  const all = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((t, s) => t + s.seconds, 0);
  return {
    requests: all.length,
    errors: samples.reduce((t, s) => t + s.errors, 0),
    p50_ms: round3(percentile(all, 50)),
    p99_ms: round3(percentile(all, 99)),
    req_per_s: Math.round(all.length / seconds),
  };
}

/** `seconds` of GETs of `url` over `connections` connections; a timeout or a status other than 200 counts as an error. */
export async function loadApi(
  url: string,
  key: string,
  seconds: number,
  connections = CONNECTIONS,
  overallRate?: number,
): Promise<Sampled> {
  const latencies: number[] = [];
  let errors = 0;
  const started = process.hrtime.bigint();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      { url, connections, duration: seconds, headers: { authorization: `Bearer ${key}` }, ...(overallRate ? { overallRate } : {}) },
      (err, done) => (err ? reject(err) : resolve(done)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode === 200) latencies.push(responseTime);
      else errors++;
    });
  });
  return { latencies, seconds: Number(process.hrtime.bigint() - started) / 1e9, errors: errors + result.errors + result.timeouts };
}

async function loadRaw(ddb: DynamoDBDocumentClient, input: QueryCommand['input'], seconds: number): Promise<Sampled> {
  const latencies: number[] = [];
  let errors = 0;
  const until = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (process.hrtime.bigint() < until) {
        const t = process.hrtime.bigint();
        try {
          const out = await ddb.send(new QueryCommand(input));
          if (out.Items?.length !== BATCH_ITEMS) errors++;
          else latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { latencies, seconds: Number(process.hrtime.bigint() - started) / 1e9, errors };
}

// ---------------------------------------------------------------------------------------------------------------
// Data

function image(clientId: string, batchId: string, i: number, uploadTs: number): Record<string, unknown> {
  const fprint = `${batchId.slice(-6)}${i.toString(16).padStart(26, '0')}`;
  const cat = i % 3 === 0;
  return {
    batch_id: batchPartition(clientId, batchId),
    img_fprint: fprint,
    client_id: clientId,
    s3img_key: `uploads/${clientId}/${batchId}/img-${i}.jpg`,
    file_name: `img-${i}.jpg`,
    op_status: 'success',
    status_ts: statusTs('success', uploadTs),
    upload_ts: uploadTs,
    rek_ts: uploadTs + 400,
    rek_iscat: cat,
    labels: cat
      ? [
          { name: 'Cat', confidence: 93.1 },
          { name: 'Animal', confidence: 93.1 },
        ]
      : [{ name: 'Cup', confidence: 51.2 }],
    ...(cat ? { cat_ts: uploadTs } : {}),
    ttl: Math.floor(Date.now() / 1000) + 30 * 86_400,
  };
}

function summary(clientId: string, batchId: string, n: number): Record<string, unknown> {
  return {
    batch_id: batchPartition(clientId, batchId),
    img_fprint: BATCH_SK,
    owner_id: clientId,
    created_ts: Date.now(),
    debug: false,
    retention_days: 30,
    ttl: Math.floor(Date.now() / 1000) + 30 * 86_400,
    expected: n,
    n_total: n,
    n_success: n,
    n_fail: 0,
    n_duplicate: 0,
    n_cats: Math.ceil(n / 3),
    n_pending: 0,
    n_reused: 0,
    closed: true,
  };
}

export async function writeAll(ddb: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[], parallel = 8): Promise<void> {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < chunks.length) {
        let pending: Record<string, unknown>[] | undefined = chunks[next++]!.map((Item) => ({ PutRequest: { Item } }));
        while (pending && pending.length > 0) {
          const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [table]: pending as never } }));
          pending = out.UnprocessedItems?.[table] as Record<string, unknown>[] | undefined;
        }
      }
    }),
  );
}

/** Other clients' batches of 100 images, so the table (and every index) grows around the measured batch. */
function filler(from: number, to: number): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (let n = from; n < to; n++) {
    const batch = Math.floor(n / 100);
    const clientId = `filler-${batch % 50}`;
    const batchId = `FILL${String(batch).padStart(8, '0')}`;
    items.push(n % 100 === 0 ? summary(clientId, batchId, 100) : image(clientId, batchId, n % 100, Date.UTC(2024, 0, 1) + n * 1000));
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------------
// A quiet client beside a client flooding POST /v1/fingerprints:known

const QUIET_RATE = 20;
/** The listing's client: a rate no run of 64 connections reaches. */
const UNLIMITED_RATE = 1_000_000;
const FLOOD_LOOPS = 8;
const FLOOD_FPRINTS = 1000;
const FLOOD_RATE = 50;
const FLOOD_ROUNDS = sized(6, 1);
const FLOOD_ROUND_SECONDS = sized(5, 1);

interface FloodCount {
  admitted: number;
  refused: number;
  fingerprints: number;
}

/**
 * FLOOD_LOOPS loops of POST /v1/fingerprints:known at the client's rate limit: each sends its next call as soon as the
 * last was answered, or, refused, once its Retry-After has passed (what the CLI does).
 */
async function flood(base: string, key: string, fprints: string[], seconds: number): Promise<FloodCount> {
  const count: FloodCount = { admitted: 0, refused: 0, fingerprints: 0 };
  const until = Date.now() + seconds * 1000;
  const body = JSON.stringify({ fprints });
  await Promise.all(
    Array.from({ length: FLOOD_LOOPS }, async () => {
      while (Date.now() < until) {
        const res = await fetch(`${base}/v1/fingerprints:known`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        });
        await res.arrayBuffer();
        if (res.status === 200) {
          count.admitted++;
          count.fingerprints += fprints.length;
        } else {
          count.refused++;
          const wait = Number(res.headers.get('retry-after') ?? 1) * 1000;
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(wait, until - Date.now()))));
        }
      }
    }),
  );
  return count;
}

async function quietBesideFlood(ddb: DynamoDBDocumentClient, table: string, base: string): Promise<Record<string, unknown>> {
  const quota = new ClientQuotaStore({ ddb, tableName: table, defaults: defaultClientLimits(), cacheMs: 0 });
  const quietKey = await registerApiKey(new Registrations({ ddb, tableName: table }), 'quiet');
  const floodKey = await registerApiKey(new Registrations({ ddb, tableName: table }), 'flooder');
  await quota.setLimits('quiet', { ratePerSecond: 1000 });
  await quota.setLimits('flooder', { ratePerSecond: FLOOD_RATE });
  const t0 = Date.UTC(2024, 6, 1);
  await writeAll(ddb, table, [
    summary('quiet', 'QUIET', BATCH_ITEMS),
    ...Array.from({ length: BATCH_ITEMS }, (_, i) => image('quiet', 'QUIET', i, t0 + i * 1000)),
  ]);
  // Half the flooder's fingerprints are known (classified in its batch FLOODED), half are not.
  const fprints = Array.from({ length: FLOOD_FPRINTS }, (_, i) => i.toString(16).padStart(32, '0'));
  const expiresAt = Math.floor(Date.now() / 1000) + 30 * 86_400;
  await writeAll(ddb, table, [
    summary('flooder', 'FLOODED', FLOOD_FPRINTS / 2),
    ...fprints
      .slice(0, FLOOD_FPRINTS / 2)
      .map((fprint) => knownItemRequest(table, { clientId: 'flooder', batchId: 'FLOODED', fprint, expiresAt }).Item!),
  ]);
  const quietUrl = `${base}/v1/batches/QUIET/images`;
  if (WARMUP_SECONDS > 0) await loadApi(quietUrl, quietKey, WARMUP_SECONDS, 2, QUIET_RATE);
  const alone: Sampled[] = [];
  const flooded: Sampled[] = [];
  const floods: FloodCount[] = [];
  for (let r = 0; r < FLOOD_ROUNDS; r++) {
    alone.push(await loadApi(quietUrl, quietKey, FLOOD_ROUND_SECONDS, 2, QUIET_RATE));
    const [quiet, count] = await Promise.all([
      loadApi(quietUrl, quietKey, FLOOD_ROUND_SECONDS, 2, QUIET_RATE),
      flood(base, floodKey, fprints, FLOOD_ROUND_SECONDS),
    ]);
    flooded.push(quiet);
    floods.push(count);
  }
  const aloneStats = summarise(alone);
  const floodedStats = summarise(flooded);
  // Each flood round's p99 over the p99 alone just before it: both saw the same background load.
  const pairedP99 = flooded.map((f, r) => summarise([f]).p99_ms / summarise([alone[r] as Sampled]).p99_ms);
  const total = (k: keyof FloodCount) => floods.reduce((t, f) => t + f[k], 0);
  const seconds = FLOOD_ROUNDS * FLOOD_ROUND_SECONDS;
  return {
    quiet: `GET /v1/batches/{id}/images (20 items), 2 connections at ${QUIET_RATE} requests/s`,
    flood: `POST /v1/fingerprints:known with ${FLOOD_FPRINTS} fingerprints, ${FLOOD_LOOPS} loops each waiting as Retry-After says, the client's rate ${FLOOD_RATE} tokens/s`,
    rounds: `${FLOOD_ROUNDS} x ${FLOOD_ROUND_SECONDS}s alone, then with the flood, alternating`,
    quiet_alone: aloneStats,
    quiet_during_flood: floodedStats,
    flooder: {
      admitted_per_s: round3(total('admitted') / seconds),
      refused_per_s: round3(total('refused') / seconds),
      fingerprints_answered_per_s: Math.round(total('fingerprints') / seconds),
    },
    quiet_p99_flood_over_alone: round3(floodedStats.p99_ms / aloneStats.p99_ms),
    quiet_p99_flood_over_alone_median_of_rounds: round3(median(pairedP99)),
    goal: { quiet_p99_flood_over_alone: '<= 3' },
  };
}

// ---------------------------------------------------------------------------------------------------------------

export default async function run(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'icecat-api-bench-'));
  const children: ChildProcess[] = [];
  try {
    const db = await startChild(['dynamodb', join(dataDir, 'db')]);
    children.push(db.child);
    const api = await startChild(['api', join(dataDir, 'api'), db.ready.url!]);
    children.push(api.child);
    const table = db.ready.table!;
    const clientId = api.ready.clientId!;

    // Enough sockets for 64 requests in flight: the SDK's default agent would queue the raw side at 50.
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: db.ready.url,
        region: REGION,
        credentials: CREDENTIALS,
        requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 256 }) },
      }),
    );

    // The listing is measured, not the client's rate limit (design §11; the flood below measures that): at its default
    // rate the demo client's 64 connections were mostly answered 429, and the few admitted waited behind them.
    const quota = new ClientQuotaStore({ ddb, tableName: table, defaults: defaultClientLimits(), cacheMs: 0 });
    await quota.setLimits(clientId, { ratePerSecond: UNLIMITED_RATE });

    const batchId = `BENCH${Date.now().toString(36).toUpperCase()}`;
    const t0 = Date.UTC(2024, 5, 1);
    await writeAll(ddb, table, [
      summary(clientId, batchId, BATCH_ITEMS),
      ...Array.from({ length: BATCH_ITEMS }, (_, i) => image(clientId, batchId, i, t0 + i * 1000)),
    ]);
    const apiUrl = `${api.ready.url}/v1/batches/${batchId}/images`;
    const rawInput = pageRequest(
      batchResultsRequest({ tableName: table, batchId, clientId, nowS: Math.floor(Date.now() / 1000) }),
      51, // what the API asks for at its default limit of 50: one page plus one item to prove there is no next
    );

    const check = await fetch(apiUrl, { headers: { authorization: `Bearer ${api.ready.key}` } });
    const checked = (await check.json()) as { items?: unknown[] };
    if (check.status !== 200 || checked.items?.length !== BATCH_ITEMS) {
      throw new Error(`API answered ${check.status} with ${checked.items?.length} items instead of ${BATCH_ITEMS}`);
    }

    const sizes: Record<string, unknown>[] = [];
    let inTable = BATCH_ITEMS + 2; // the batch, its summary and the demo key
    for (const size of TABLE_SIZES) {
      let seedSeconds = 0;
      if (size > inTable) {
        const started = Date.now();
        await writeAll(ddb, table, filler(inTable, size));
        seedSeconds = (Date.now() - started) / 1000;
        inTable = size;
      }
      if (WARMUP_SECONDS > 0) {
        await loadApi(apiUrl, api.ready.key!, WARMUP_SECONDS);
        await loadRaw(ddb, rawInput, WARMUP_SECONDS);
      }
      // Rounds alternate so that a neighbour's CPU burst lands on both sides alike.
      const apiRounds: Sampled[] = [];
      const rawRounds: Sampled[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        rawRounds.push(await loadRaw(ddb, rawInput, ROUND_SECONDS));
        apiRounds.push(await loadApi(apiUrl, api.ready.key!, ROUND_SECONDS));
      }
      const apiStats = summarise(apiRounds);
      if (apiStats.errors > 0) throw new Error(`the API answered ${apiStats.errors} listings with an error at ${inTable} items`);
      const rawStats = summarise(rawRounds);
      // Each round's API p99 over the raw p99 measured just before it: both saw the same background load.
      const pairedP99 = apiRounds.map((a, r) => summarise([a]).p99_ms / summarise([rawRounds[r] as Sampled]).p99_ms);
      sizes.push({
        table_items: inTable,
        seed_seconds: round3(seedSeconds),
        api: apiStats,
        raw_query: rawStats,
        p99_ratio_api_over_raw: round3(apiStats.p99_ms / rawStats.p99_ms),
        p99_ratio_api_over_raw_median_of_rounds: round3(median(pairedP99)),
        p50_ratio_api_over_raw: round3(apiStats.p50_ms / rawStats.p50_ms),
      });
    }

    const knownFlood = await quietBesideFlood(ddb, table, api.ready.url!);

    const bySize = (n: number) => sizes.find((s) => s.table_items === n) as { api: { p99_ms: number }; raw_query: { p99_ms: number } };
    const large = bySize(TABLE_SIZES[2]!);
    const small = bySize(TABLE_SIZES[1]!);
    return {
      endpoint: 'GET /v1/batches/{id}/images (20 items)',
      connections: CONNECTIONS,
      rounds: `${ROUNDS} x ${ROUND_SECONDS}s per side, alternating raw/API, after ${WARMUP_SECONDS}s warm-up each`,
      load_generator: 'autocannon (API) / 64 concurrent SDK QueryCommand loops (raw), both in the bench process',
      sizes,
      api_p99_100k_over_1k: round3(large.api.p99_ms / small.api.p99_ms),
      raw_p99_100k_over_1k: round3(large.raw_query.p99_ms / small.raw_query.p99_ms),
      goals: { api_p99_over_raw: '<= 1.5', p99_100k_over_1k: '<= 1.2', quiet_p99_flood_over_alone: '<= 3' },
      known_flood: knownFlood,
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  const sizes = (pick(r, 'sizes') ?? []) as { table_items: number }[];
  const largest = sizes[sizes.length - 1];
  return [
    figure(`API p99 ÷ raw Query p99, ${largest?.table_items ?? '?'} items (all rounds)`, pick(largest, 'p99_ratio_api_over_raw'), '<= 1.5'),
    figure(
      `API p99 ÷ raw Query p99, ${largest?.table_items ?? '?'} items (median of rounds)`,
      pick(largest, 'p99_ratio_api_over_raw_median_of_rounds'),
      '<= 1.5',
    ),
    figure('API p99, 100k items ÷ 1k items', pick(r, 'api_p99_100k_over_1k'), '<= 1.2'),
    figure(
      "A quiet client's p99 while another floods fingerprints:known ÷ alone (all rounds)",
      pick(r, 'known_flood', 'quiet_p99_flood_over_alone'),
      '<= 3',
    ),
    figure(
      "A quiet client's p99 while another floods fingerprints:known ÷ alone (median of rounds)",
      pick(r, 'known_flood', 'quiet_p99_flood_over_alone_median_of_rounds'),
      '<= 3',
    ),
  ];
}

if (require.main === module && process.argv[2] === '--serve') {
  serve(process.argv[3]!, process.argv[4]!, process.argv[5]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
