// The review queue (docs/design.md §10) on a 10,000-image batch: the first page of GET …/images?review=pending&order=
// uncertain beside the first page of the plain listing GET …/images (both 20 images), p99 under 16 connections over
// loopback, rounds alternating. Goal: the queue's p99 at most 1.5x the plain listing's. Then write units per review,
// measured by DynamoDB Local (ReturnConsumedCapacity INDEXES) on the table as deployed: a verdict given, changed and
// withdrawn, each with its counter move, as two plain writes (the figure AWS charges per item) and as a transaction.
//
// The latency half runs as bench/api.bench.ts does (dynalite and the API each in a child process, autocannon here);
// the queue's page is two key-condition Queries of the batch-review index (keys only) and one BatchGetItem of the
// page, where the plain listing is one Query of the batch's partition.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { BatchStore } from '../lib/store/batch-store';
import { BATCH_SK, batchPartition, reviewKey, statusTs } from '../lib/store/table/schema';
import { ensureTable, localDynamoClient } from '../local/dynamodb/dynamodb';
import { startDynamoDBLocal } from '../local/dynamodb/dynamodb-local';
import { loadTableInput } from '../local/dynamodb/table-definition';
import { loadApi, type Sampled, startChild, stopChild, summarise, writeAll } from './api.bench';
import { headline as figure, type Headline, median, pick, round, sized } from './stats';

/** Fewer than the api bench's 64: a page here is a batch's first 20 images with 40 presigned links, not a Query alone. */
const CONNECTIONS = 16;
const PAGE = 20;
const BATCH_IMAGES = sized(10_000, 300);
const ROUNDS = sized(5, 1);
const ROUND_SECONDS = sized(3, 1);
const WARMUP_SECONDS = sized(2, 1);
const REVIEWS = sized(40, 6);
const THRESHOLD = 80;
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A classified image as the ingest writes it: labels, a cat box for cats, the trimmed detection, its queue key. */
function image(clientId: string, batchId: string, i: number): Record<string, unknown> {
  const uploadTs = Date.UTC(2024, 5, 1) + i * 1000;
  // Confidences spread over 0-100, so the queue's two sides both reach far.
  const catConfidence = Math.round((((i * 7919) % 10_000) / 100) * 100) / 100;
  const isCat = catConfidence >= THRESHOLD;
  const labels = [
    { name: isCat ? 'Cat' : 'Furniture', confidence: Math.max(catConfidence, 55) },
    { name: 'Animal', confidence: 88.4 },
    { name: 'Pet', confidence: 80.1 },
    { name: 'Indoors', confidence: 71.9 },
    { name: 'Floor', confidence: 63.2 },
  ];
  return {
    batch_id: batchPartition(clientId, batchId),
    img_fprint: `${i.toString(16).padStart(32, '0')}`,
    client_id: clientId,
    s3img_key: `uploads/${clientId}/${batchId}/img-${i}.jpg`,
    file_name: `img-${i}.jpg`,
    op_status: 'success',
    status_ts: statusTs('success', uploadTs),
    upload_ts: uploadTs,
    rek_ts: uploadTs + 400,
    rek_iscat: isCat,
    cat_conf: catConfidence,
    rek_cats: isCat ? [{ confidence: catConfidence, box: { left: 0.21, top: 0.18, width: 0.42, height: 0.55 } }] : [],
    labels,
    rek_resp: { model: '3.0', labels: labels.map((l) => ({ ...l, parents: ['Animal'], instances: l.name === 'Cat' ? 1 : 0 })) },
    review_key: reviewKey(false, catConfidence),
    processed_key: `processed/${clientId}/${batchId}/${i.toString(16).padStart(32, '0')}.jpg`,
    phash: 'a5a5a5a5a5a5a5a5',
    width: 1024,
    height: 768,
    format: 'jpeg',
    ttl: Math.floor(Date.now() / 1000) + 30 * 86_400,
  };
}

function summary(clientId: string, batchId: string, n: number, cats: number): Record<string, unknown> {
  return {
    batch_id: batchPartition(clientId, batchId),
    img_fprint: BATCH_SK,
    owner_id: clientId,
    created_ts: Date.now(),
    debug: false,
    retention_days: 30,
    ttl: Math.floor(Date.now() / 1000) + 30 * 86_400,
    exp_due: 'due',
    expected: n,
    closed: true,
    closed_ts: Date.now(),
    done_ts: Date.now(),
    cat_min_conf: THRESHOLD,
    n_total: n,
    n_success: n,
    n_fail: 0,
    n_duplicate: 0,
    n_cats: cats,
    n_pending: 0,
    n_reused: 0,
    n_reviewed: 0,
    n_corrected: 0,
  };
}

async function latency(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'icecat-review-bench-'));
  const children: ChildProcess[] = [];
  try {
    const db = await startChild(['dynamodb', join(dataDir, 'db')]);
    children.push(db.child);
    const api = await startChild(['api', join(dataDir, 'api'), db.ready.url!]);
    children.push(api.child);
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: db.ready.url,
        region: REGION,
        credentials: CREDENTIALS,
        requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) },
      }),
    );
    const clientId = api.ready.clientId!;
    const batchId = `REVIEW${Date.now().toString(36).toUpperCase()}`;
    const images = Array.from({ length: BATCH_IMAGES }, (_, i) => image(clientId, batchId, i));
    const started = Date.now();
    await writeAll(ddb, db.ready.table!, [summary(clientId, batchId, BATCH_IMAGES, images.filter((i) => i.rek_iscat).length), ...images]);
    const seedSeconds = (Date.now() - started) / 1000;

    const base = `${api.ready.url}/v1/batches/${batchId}/images`;
    const urls = { queue: `${base}?review=pending&order=uncertain&limit=${PAGE}`, plain: `${base}?limit=${PAGE}` };
    // Both answer a full page, the queue nearest the threshold first.
    for (const [name, url] of Object.entries(urls)) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${api.ready.key}` } });
      const body = (await res.json()) as { items?: { catConfidence: number }[]; cursor?: string };
      if (res.status !== 200 || body.items?.length !== PAGE || !body.cursor)
        throw new Error(`${name} answered ${res.status} with ${body.items?.length} items`);
      if (name === 'queue') {
        const distances = body.items.map((i) => Math.abs(i.catConfidence - THRESHOLD));
        if (distances.some((d, k) => k > 0 && d < distances[k - 1]!)) throw new Error('the queue is not nearest the threshold first');
      }
    }
    if (WARMUP_SECONDS > 0) {
      await loadApi(urls.plain, api.ready.key!, WARMUP_SECONDS, CONNECTIONS);
      await loadApi(urls.queue, api.ready.key!, WARMUP_SECONDS, CONNECTIONS);
    }
    const plain: Sampled[] = [];
    const queue: Sampled[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      plain.push(await loadApi(urls.plain, api.ready.key!, ROUND_SECONDS, CONNECTIONS));
      queue.push(await loadApi(urls.queue, api.ready.key!, ROUND_SECONDS, CONNECTIONS));
    }
    const plainStats = summarise(plain);
    const queueStats = summarise(queue);
    const paired = queue.map((q, r) => summarise([q]).p99_ms / summarise([plain[r]!]).p99_ms);
    return {
      batch_images: BATCH_IMAGES,
      seed_seconds: round(seedSeconds),
      page: PAGE,
      plain_listing: plainStats,
      review_queue: queueStats,
      p99_ratio_queue_over_plain: round(queueStats.p99_ms / plainStats.p99_ms),
      p99_ratio_queue_over_plain_median_of_rounds: round(median(paired)),
      p50_ratio_queue_over_plain: round(queueStats.p50_ms / plainStats.p50_ms),
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Sums the write units DynamoDB Local reports, by part (table, each index). */
class Units {
  total = 0;
  writes = 0;
  readonly byPart: Record<string, number> = {};
  add(c: ConsumedCapacity | undefined): void {
    if (!c) return;
    this.writes++;
    this.total += c.CapacityUnits ?? 0;
    const add = (part: string, n: number | undefined) => (this.byPart[part] = (this.byPart[part] ?? 0) + (n ?? 0));
    add('table', c.Table?.CapacityUnits);
    for (const [name, v] of Object.entries(c.LocalSecondaryIndexes ?? {})) add(`lsi:${name}`, v.CapacityUnits);
    for (const [name, v] of Object.entries(c.GlobalSecondaryIndexes ?? {})) add(`gsi:${name}`, v.CapacityUnits);
  }
  per(n: number) {
    const r = (x: number) => round(x / n, 2);
    return {
      wcu: r(this.total),
      writes: r(this.writes),
      byPart: Object.fromEntries(
        Object.entries(this.byPart)
          .filter(([, v]) => v)
          .map(([k, v]) => [k, r(v)]),
      ),
    };
  }
}

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand']);

/** Write units of a verdict given, changed and withdrawn, on DynamoDB Local, plain and in a transaction. */
async function writeUnits(): Promise<Record<string, unknown>> {
  const local = await startDynamoDBLocal();
  try {
    const raw = localDynamoClient(local.url);
    const input = await loadTableInput('IceCatWrangler');
    await ensureTable(raw, input);
    const ddb = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
    let units = new Units();
    ddb.middlewareStack.add(
      (next, context) => async (args) => {
        if (!WRITES.has(context.commandName ?? '')) return next(args);
        (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'INDEXES';
        const out = await next(args);
        const consumed = (out.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity;
        for (const c of Array.isArray(consumed) ? consumed : [consumed]) units.add(c);
        return out;
      },
      { step: 'initialize', name: 'measureWriteUnits' },
    );
    const out: Record<string, unknown> = {};
    const sample = image('bench', 'sample', 1);
    out.image_item_bytes = JSON.stringify(sample).length;
    for (const transactions of [false, true]) {
      const batchId = `units-${transactions ? 'tx' : 'plain'}`;
      const images = Array.from({ length: REVIEWS }, (_, i) => image('bench', batchId, i));
      await ddb.send(
        new PutCommand({ TableName: input.TableName, Item: summary('bench', batchId, REVIEWS, images.filter((i) => i.rek_iscat).length) }),
      );
      for (const item of images) await ddb.send(new PutCommand({ TableName: input.TableName, Item: item }));
      const store = new BatchStore({ ddb, tableName: input.TableName!, transactions });
      const phase = async (name: string, act: (fprint: string, i: number) => Promise<unknown>) => {
        units = new Units();
        for (const [i, item] of images.entries()) await act(item.img_fprint as string, i);
        return [name, units.per(images.length)] as const;
      };
      // Each verdict disagrees with the machine on every other image, so cats, reviewed and corrected all move.
      const phases = [
        await phase('give', (f, i) => store.review('bench', batchId, f, { isCat: i % 2 === 0 })),
        await phase('change', (f, i) => store.review('bench', batchId, f, { isCat: i % 2 === 1, note: 'looked again' })),
        await phase('withdraw', (f) => store.review('bench', batchId, f, undefined)),
      ];
      out[transactions ? 'transactions_dynamodb_local' : 'plain'] = Object.fromEntries(phases);
    }
    const plain = out.plain as Record<string, { wcu: number; byPart: Record<string, number> }>;
    // AWS charges a transaction's item writes twice (its index writes as the same writes outside one): from the plain run.
    out.aws_wcu_per_review_with_transactions = Object.fromEntries(
      Object.entries(plain).map(([name, p]) => [name, round(p.wcu + (p.byPart.table ?? 0), 2)]),
    );
    out.note =
      'plain: the record update and the counter update as two writes, the figure AWS charges; DynamoDB Local reports ' +
      "a transaction's capacity its own way, so aws_wcu_per_review_with_transactions doubles the plain run's table units";
    raw.destroy();
    return out;
  } finally {
    await local.stop();
  }
}

export default async function run(): Promise<Record<string, unknown>> {
  const latencies = await latency();
  const units = await writeUnits();
  return {
    endpoint: `GET /v1/batches/{id}/images?review=pending&order=uncertain beside GET /v1/batches/{id}/images, first page (${PAGE})`,
    connections: CONNECTIONS,
    rounds: `${ROUNDS} x ${ROUND_SECONDS}s per side, alternating plain/queue, after ${WARMUP_SECONDS}s warm-up each`,
    latency: latencies,
    write_units_per_review: units,
    goals: { p99_queue_over_plain: '<= 1.5' },
  };
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure(
      'review queue p99 ÷ plain listing p99, first page of a 10,000-image batch (all rounds)',
      pick(r, 'latency', 'p99_ratio_queue_over_plain'),
      '<= 1.5',
    ),
    figure(
      'review queue p99 ÷ plain listing p99 (median of rounds)',
      pick(r, 'latency', 'p99_ratio_queue_over_plain_median_of_rounds'),
      '<= 1.5',
    ),
    figure('WCU per review given (plain writes, as AWS charges)', pick(r, 'write_units_per_review', 'plain', 'give', 'wcu')),
    figure(
      'WCU per review given, with transactions on AWS',
      pick(r, 'write_units_per_review', 'aws_wcu_per_review_with_transactions', 'give'),
    ),
  ];
}
