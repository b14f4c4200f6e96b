// The ingest pipeline end to end on the local stack: uploads go to the local S3, the bridge delivers AWS-shaped
// S3-in-SQS events to the real handler, which talks to dynalite and the offline detector through the AWS SDK.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import sharp from 'sharp';
import { sqsEventFor } from '../../events';
import { createIngestHandler } from '../../functions/ingest/app';
import { registerClient } from '../../lib/auth/register';
import { LocalMessageVisibility } from '../../lib/aws/message-visibility';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { PowertoolsIngestMetrics } from '../../lib/ingest/metrics';
import { LocalJobQueue } from '../../lib/jobs/queue';
import { newBatch as batchSummary } from '../../lib/store/batch/summary';
import { Registrations } from '../../lib/store/client/registrations';
import { toBatchItem } from '../../lib/store/table/attributes';
import { BATCH_SK, type BatchItem, batchKey, batchPartition, type ImageItem } from '../../lib/store/table/schema';
import {
  waitForBridgeIdle as bridgeIdle,
  detectCalls,
  waitFor as poll,
  uploadFile as put,
  aws as stackClients,
  uniqueId,
} from '../helpers';
import { call, newClient } from '../helpers/api';
import { distinctImages, seededRandom } from '../helpers/stack-process';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const CAT = fixture('chelsea.png');
const NOT_CAT = fixture('coffee.png');

const aws = stackClients();
const TABLE = () => process.env.TABLE_NAME!;
const BUCKET = () => process.env.BUCKET_NAME!;
const newBatch = () => uniqueId('ingest');
const waitFor = <T>(probe: () => Promise<T | undefined>, what: string) => poll(probe, { what, timeoutMs: 45_000 });

async function summary(batchId: string, clientId = 'demo'): Promise<BatchItem | undefined> {
  const out = await aws.ddb.send(new GetCommand({ TableName: TABLE(), Key: batchKey(clientId, batchId), ConsistentRead: true }));
  return out.Item as BatchItem | undefined;
}

/** Waits until the batch has seen `uploads` uploads, each has settled, and the queue is idle (objects moved). */
async function settled(batchId: string, uploads: number, clientId = 'demo'): Promise<BatchItem> {
  await waitFor(async () => {
    const s = await summary(batchId, clientId);
    return s && s.n_total >= uploads && s.n_success + s.n_fail + s.n_duplicate === s.n_total ? s : undefined;
  }, `batch ${batchId} to settle ${uploads} uploads`);
  await bridgeIdle();
  return (await summary(batchId, clientId))!;
}

/** The batch's whole partition, its summary included, in one consistent Query. */
async function partition(batchId: string, clientId = 'demo'): Promise<(ImageItem | BatchItem)[]> {
  const out = await aws.ddb.send(
    new QueryCommand({
      TableName: TABLE(),
      KeyConditionExpression: 'batch_id = :b',
      ExpressionAttributeValues: { ':b': batchPartition(clientId, batchId) },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []) as (ImageItem | BatchItem)[];
}

async function images(batchId: string, clientId = 'demo'): Promise<ImageItem[]> {
  return (await partition(batchId, clientId)).filter((i): i is ImageItem => i.img_fprint !== BATCH_SK);
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await aws.s3.send(new ListObjectsV2Command({ Bucket: BUCKET(), Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

/** A client of its own: reuse across batches would otherwise answer from another test's classification of a fixture. */
async function freshClient(): Promise<string> {
  const clientId = uniqueId('fresh');
  await registerClient(new Registrations({ ddb: aws.ddb, tableName: TABLE() }), clientId);
  return clientId;
}

describe('ingest on the local stack', () => {
  it('records a cat photo as a successful cat and moves it under processed/', async () => {
    const batch = newBatch();

    await put(`uploads/demo/${batch}/chelsea the cat.png`, CAT);
    const s = await settled(batch, 1);

    const [item] = await images(batch);
    expect(s).toMatchObject({ n_total: 1, n_pending: 0, n_success: 1, n_cats: 1, owner_id: 'demo' });
    expect(item).toMatchObject({ op_status: 'success', rek_iscat: true, file_name: 'chelsea the cat.png', client_id: 'demo' });
    expect(item!.labels!.map((l) => l.name)).toContain('Cat');
    expect(item!.cat_ts).toBe(item!.upload_ts);
    expect(item!.ttl).toBeGreaterThan(Date.now() / 1000);
    expect(await keysUnder(`processed/demo/${batch}/`)).toEqual([`processed/demo/${batch}/${item!.img_fprint}.png`]);
    expect(await keysUnder(`uploads/demo/${batch}/`)).toEqual([]);
  });

  it('records a photo without a cat as not a cat', async () => {
    const batch = newBatch();

    await put(`uploads/demo/${batch}/coffee.png`, NOT_CAT);
    const s = await settled(batch, 1);

    const [item] = await images(batch);
    expect(s).toMatchObject({ n_success: 1, n_cats: 0 });
    expect(item).toMatchObject({ op_status: 'success', rek_iscat: false });
    expect(item).not.toHaveProperty('cat_ts');
  });

  it('classifies the same image uploaded twice once and counts the second as a duplicate', async () => {
    const batch = newBatch();
    const client = await freshClient();
    await bridgeIdle();
    const before = await detectCalls();

    await put(`uploads/${client}/${batch}/first.png`, CAT);
    await settled(batch, 1, client);
    await put(`uploads/${client}/${batch}/again.png`, CAT);
    const s = await settled(batch, 2, client);

    const items = await images(batch, client);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ op_status: 'success', file_name: 'first.png', dup_count: 1 });
    expect([...(items[0]!.dup_files as unknown as Set<string>)]).toEqual(['again.png']);
    expect(s).toMatchObject({ n_total: 2, n_success: 1, n_duplicate: 1 });
    expect((await detectCalls()) - before).toBe(1);
    expect(await keysUnder(`duplicates/${client}/${batch}/`)).toEqual([`duplicates/${client}/${batch}/${items[0]!.img_fprint}/again.png`]);
  });

  it('classifies 20 simultaneous copies once: one success, 19 duplicates, one DetectLabels call', async () => {
    const batch = newBatch();
    const client = await freshClient();
    await bridgeIdle();
    const before = await detectCalls();

    await Promise.all(Array.from({ length: 20 }, (_, i) => put(`uploads/${client}/${batch}/copy-${i}.png`, NOT_CAT)));
    const s = await settled(batch, 20, client);
    await bridgeIdle();

    const items = await images(batch, client);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ op_status: 'success', dup_count: 19 });
    expect(s).toMatchObject({ n_total: 20, n_success: 1, n_duplicate: 19, n_fail: 0 });
    expect((await detectCalls()) - before).toBe(1);
    expect(await keysUnder(`duplicates/${client}/${batch}/`)).toHaveLength(19);
    expect(await keysUnder(`uploads/${client}/${batch}/`)).toEqual([]);
  });

  it('ignores the same S3 event delivered twice: no second classification, counters unchanged', async () => {
    const batch = newBatch();
    const key = `uploads/demo/${batch}/once+only.png`;
    await put(key, NOT_CAT);
    const first = await settled(batch, 1);
    await bridgeIdle();
    const before = await detectCalls();
    const handler = createIngestHandler({
      callbacks: new LocalJobQueue('callbacks', { awaitImmediate: false }),
      visibility: new LocalMessageVisibility(),
      metrics: new PowertoolsIngestMetrics(),
    });
    const redelivery = sqsEventFor(BUCKET(), `uploads/demo/${batch}/once%2Bonly.png`, NOT_CAT.length);
    const { ETag } = await aws.s3.send(
      new HeadObjectCommand({ Bucket: BUCKET(), Key: `processed/demo/${batch}/${(await images(batch))[0]!.img_fprint}.png` }),
    );
    const record = JSON.parse(redelivery.Records[0]!.body) as { Records: { s3: { object: { eTag: string } } }[] };
    record.Records[0]!.s3.object.eTag = ETag!.replace(/"/g, '');
    redelivery.Records[0]!.body = JSON.stringify(record);

    const out = await handler(redelivery);

    expect(out.batchItemFailures).toEqual([]);
    expect(await summary(batch)).toEqual(first);
    expect((await detectCalls()) - before).toBe(0);
    expect(await images(batch)).toHaveLength(1);
  });

  it('classifies a WebP by sending converted JPEG bytes', async () => {
    const batch = newBatch();
    const webp = await sharp(CAT).webp({ quality: 90 }).toBuffer();

    await put(`uploads/demo/${batch}/cat.webp`, webp);
    await settled(batch, 1);

    const [item] = await images(batch);
    expect(item).toMatchObject({ op_status: 'success', format: 'webp', rek_iscat: true });
    expect(await keysUnder(`processed/demo/${batch}/`)).toEqual([`processed/demo/${batch}/${item!.img_fprint}.webp`]);
  });

  it('writes bounded debug logs and the sparse log key only for a batch in debug mode', async () => {
    const batch = newBatch();
    const client = await freshClient();
    const now = Date.now();
    await aws.ddb.send(
      new PutCommand({
        TableName: TABLE(),
        Item: toBatchItem(batchSummary({ clientId: client, batchId: batch, now, debug: true, retentionDays: 7 })),
      }),
    );

    await put(`uploads/${client}/${batch}/cat.png`, CAT);
    await settled(batch, 1, client);

    const [item] = await images(batch, client);
    expect(item!.log_ts).toBe(item!.upload_ts);
    expect(item!.logs!.join('\n')).toMatch(/DetectLabels by Bytes/);
    expect(item!.ttl).toBeLessThanOrEqual(Math.floor(now / 1000) + 7 * 86400 + 60);
  });

  it('writes no logs for a batch not in debug mode', async () => {
    const batch = newBatch();

    await put(`uploads/demo/${batch}/coffee.png`, NOT_CAT);
    await settled(batch, 1);

    const [item] = await images(batch);
    expect(item).not.toHaveProperty('logs');
    expect(item).not.toHaveProperty('log_ts');
  });
});

describe('a record names only objects that are already where it says', () => {
  async function rests(key: string): Promise<boolean> {
    try {
      await aws.s3.send(new HeadObjectCommand({ Bucket: BUCKET(), Key: key }));
      return true;
    } catch (err) {
      if ((err as Error).name === 'NotFound') return false;
      throw err;
    }
  }

  /** The API's imageUrl of the image, fetched: its HTTP status. */
  async function imageUrlStatus(key: string, batchId: string, fprint: string): Promise<number> {
    const image = await call<{ imageUrl: string | null }>('GET', `/v1/batches/${batchId}/images/${fprint}`, { key });
    return image.body.imageUrl ? (await fetch(image.body.imageUrl)).status : image.status;
  }

  it('the moment a record says success or fail (polled back to back), its object rests there; at done, every one does', async () => {
    const client = await newClient('rests');
    const bodies = await distinctImages(8, seededRandom(2026));
    const files = bodies.map((body, i) => ({ name: `img-${i}.png`, contentType: 'image/png', size: body.length }));
    const created = await call<{ batchId: string }>('POST', '/v1/batches', { key: client.key, body: { files } });
    expect(created.status).toBe(201);
    const batch = created.body.batchId;
    const finalSeen = new Set<string>();
    const notThere: string[] = [];
    const urlChecks: Promise<[string, number]>[] = [];
    let atDone: string[] | undefined;

    await Promise.all(bodies.map((body, i) => put(`uploads/${client.clientId}/${batch}/img-${i}.png`, body)));
    // No bridge-idle wait and no pause between reads: each final record is looked at within a Query of being written.
    const until = Date.now() + 60_000;
    while (atDone === undefined && Date.now() < until) {
      const items = await partition(batch, client.clientId);
      const records = items.filter((i): i is ImageItem => i.img_fprint !== BATCH_SK);
      for (const record of records) {
        if (record.op_status === 'processing' || finalSeen.has(record.img_fprint)) continue;
        finalSeen.add(record.img_fprint);
        if (!(await rests(record.processed_key!))) notThere.push(record.processed_key!);
        if (record.op_status === 'success') {
          urlChecks.push(imageUrlStatus(client.key, batch, record.img_fprint).then((status) => [record.file_name!, status]));
        }
      }
      if ((items.find((i) => i.img_fprint === BATCH_SK) as BatchItem | undefined)?.done_ts !== undefined) {
        atDone = [];
        for (const record of records)
          if (!(await rests(record.processed_key ?? `(no resting key: ${record.file_name})`))) atDone.push(record.file_name!);
      }
    }

    expect(atDone).toEqual([]);
    expect(finalSeen.size).toBe(8);
    expect(notThere).toEqual([]);
    // The API's imageUrl of each success, asked for as soon as its record was seen.
    expect((await Promise.all(urlChecks)).sort()).toEqual(files.map((f) => [f.name, 200]).sort());
  });
});

describe('reuse across batches', () => {
  it('classifies the same pixels in two batches of one client with one DetectLabels call; the second is reused', async () => {
    const client = await freshClient();
    const [first, second] = [newBatch(), newBatch()];
    await bridgeIdle();
    const before = await detectCalls();

    await put(`uploads/${client}/${first}/chelsea.png`, CAT);
    await settled(first, 1, client);
    await put(`uploads/${client}/${second}/same cat.png`, CAT);
    const s = await settled(second, 1, client);

    const [original] = await images(first, client);
    const [copy] = await images(second, client);
    expect((await detectCalls()) - before).toBe(1);
    expect(s).toMatchObject({ n_total: 1, n_success: 1, n_reused: 1, n_cats: 1, n_pending: 0 });
    expect(await summary(first, client)).toMatchObject({ n_success: 1, n_reused: 0 });
    expect(copy).toMatchObject({
      op_status: 'success',
      reused: true,
      rek_iscat: true,
      labels: original!.labels,
      rek_cats: original!.rek_cats,
    });
    expect(copy!.cat_conf).toBe(original!.cat_conf);
    expect(copy!.rek_ts).toBe(original!.rek_ts);
    expect(copy!.cat_ts).toBe(copy!.upload_ts);
    expect(original!.rek_cats!.length).toBeGreaterThan(0);
    expect(original).not.toHaveProperty('reused');
    expect(await keysUnder(`processed/${client}/${second}/`)).toEqual([`processed/${client}/${second}/${copy!.img_fprint}.png`]);
  });

  it("never reuses another client's classification: two clients, two DetectLabels calls", async () => {
    const [one, two] = [await freshClient(), await freshClient()];
    const batch = newBatch();
    await bridgeIdle();
    const before = await detectCalls();

    await put(`uploads/${one}/${batch}/coffee.png`, NOT_CAT);
    await settled(batch, 1, one);
    await put(`uploads/${two}/${batch}/coffee.png`, NOT_CAT);
    const s = await settled(batch, 1, two);

    expect((await detectCalls()) - before).toBe(2);
    expect(s).toMatchObject({ n_success: 1, n_reused: 0 });
    expect((await images(batch, two))[0]).not.toHaveProperty('reused');
  });
});

describe('ingest under faults and crashes', () => {
  async function faults(patch: Record<string, number>) {
    await fetch(`${process.env.AWS_ENDPOINT_URL_REKOGNITION}/__faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(patch),
    });
  }
  afterEach(() => faults({ throttleNext: 0, throttleRate: 0 }));

  it('retries DetectLabels throttling (injected at the local detector) with backoff and classifies once', async () => {
    const batch = newBatch();
    const client = await freshClient();
    await bridgeIdle();
    await faults({ throttleNext: 2 });

    await put(`uploads/${client}/${batch}/cat.png`, CAT);
    const s = await settled(batch, 1, client);

    expect(s).toMatchObject({ n_total: 1, n_success: 1, n_cats: 1 });
    const stats = (await (await fetch(`${process.env.AWS_ENDPOINT_URL_REKOGNITION}/__faults`)).json()) as { throttleNext: number };
    expect(stats.throttleNext).toBe(0);
  });

  it('releases the claim when throttling outlasts the retries, and the redelivered message classifies the image', async () => {
    const batch = newBatch();
    const client = await freshClient();
    await bridgeIdle();
    await faults({ throttleNext: Number(process.env.REKOGNITION_MAX_ATTEMPTS ?? 6) });

    await put(`uploads/${client}/${batch}/coffee.png`, NOT_CAT);
    const s = await settled(batch, 1, client);

    const [item] = await images(batch, client);
    expect(s).toMatchObject({ n_total: 1, n_success: 1, n_fail: 0 });
    expect(item).toMatchObject({ op_status: 'success' });
    expect(item).not.toHaveProperty('claim_id');
  });

  it('takes over a processing claim left by a crashed run once its lease has expired', async () => {
    const batch = newBatch();
    const key = `uploads/demo/${batch}/crashed.png`;
    const fp = await fingerprint(NOT_CAT, { maxInputPixels: 100_000_000 });
    const then = Date.now() - 10 * 60_000;
    await seedBatch(batch, 'demo', { n_total: 1, n_pending: 1 });
    await aws.ddb.send(
      new PutCommand({
        TableName: TABLE(),
        Item: {
          batch_id: batchPartition('demo', batch),
          img_fprint: fp.fprint,
          client_id: 'demo',
          s3img_key: key,
          file_name: 'crashed.png',
          op_status: 'processing',
          received_ts: then,
          ttl: Math.floor(then / 1000) + 86400,
          claim_id: 'crashed-run',
          lease_until: then + 1000,
        },
      }),
    );

    await put(key, NOT_CAT);
    const s = await settled(batch, 1);

    const [item] = await images(batch);
    expect(item).toMatchObject({ op_status: 'success', upload_ts: then });
    expect(item).not.toHaveProperty('claim_id');
    expect(s).toMatchObject({ n_total: 1, n_success: 1 });
  });

  it('counts an upload of an image another upload is still classifying as a duplicate, without waiting', async () => {
    const batch = newBatch();
    const fp = await fingerprint(NOT_CAT, { maxInputPixels: 100_000_000 });
    const now = Date.now();
    await seedBatch(batch, 'demo', { n_total: 1, n_pending: 1 });
    await aws.ddb.send(
      new PutCommand({
        TableName: TABLE(),
        Item: {
          batch_id: batchPartition('demo', batch),
          img_fprint: fp.fprint,
          client_id: 'demo',
          s3img_key: `uploads/demo/${batch}/first.png`,
          file_name: 'first.png',
          op_status: 'processing',
          received_ts: now,
          ttl: Math.floor(now / 1000) + 86400,
          claim_id: 'live-run',
          lease_until: now + 10 * 60_000,
        },
      }),
    );

    await put(`uploads/demo/${batch}/second.png`, NOT_CAT);
    const s = await waitFor(async () => ((await summary(batch))?.n_duplicate === 1 ? summary(batch) : undefined), 'the duplicate count');

    expect(s).toMatchObject({ n_total: 2, n_pending: 1, n_duplicate: 1, n_success: 0 });
    expect((await images(batch))[0]).toMatchObject({ op_status: 'processing', claim_id: 'live-run', dup_count: 1 });
  });

  it("keeps two clients with the same batch name apart: each upload lands in its own client's batch", async () => {
    const batch = newBatch();
    const other = uniqueId('other');
    await registerClient(new Registrations({ ddb: aws.ddb, tableName: TABLE() }), other);

    await put(`uploads/${other}/${batch}/cat.png`, CAT);
    await put(`uploads/demo/${batch}/coffee.png`, NOT_CAT);
    const [mine, theirs] = [await settled(batch, 1), await settled(batch, 1, other)];

    expect([mine.n_cats, theirs.n_cats]).toEqual([0, 1]);
    expect((await images(batch)).map((i) => i.file_name)).toEqual(['coffee.png']);
    expect((await images(batch, other)).map((i) => i.file_name)).toEqual(['cat.png']);
    expect(await keysUnder(`processed/demo/${batch}/`)).toHaveLength(1);
    expect(await keysUnder(`processed/${other}/${batch}/`)).toHaveLength(1);
  });

  it('refuses an unknown client: moved under failed/, no batch, no record, no DetectLabels call', async () => {
    const batch = newBatch();
    const ghost = uniqueId('ghost');
    await bridgeIdle();
    const before = await detectCalls();

    await put(`uploads/${ghost}/${batch}/cat.png`, CAT);
    await waitFor(async () => ((await keysUnder(`failed/${ghost}/${batch}/`)).length ? true : undefined), 'the refused upload to move');
    await bridgeIdle();

    expect(await summary(batch, ghost)).toBeUndefined();
    expect(await images(batch, ghost)).toEqual([]);
    expect((await detectCalls()) - before).toBe(0);
    expect(await keysUnder(`uploads/${ghost}/`)).toEqual([]);
  });
});

describe('bad input ends as a fail record and an object under failed/, never a crash', () => {
  const cases: [string, string, () => Promise<Buffer | string>, string][] = [
    ['a zero-byte file', 'empty.jpg', async () => Buffer.alloc(0), 'EmptyFile'],
    ['text named .jpg', 'notes.jpg', async () => 'this is not a picture of a cat', 'NotAnImage'],
    ['a truncated JPEG', 'cut.jpg', async () => (await sharp(CAT).jpeg().toBuffer()).subarray(0, 4000), 'CorruptImage'],
    ['an image below 80 px', 'tiny.png', async () => sharp(CAT).resize(60, 40).png().toBuffer(), 'ImageTooSmall'],
    ['a decompression bomb (a tiny PNG declaring 50,000x50,000)', 'bomb.png', async () => pngBomb(50_000, 50_000), 'TooManyPixels'],
    ['a file over the size cap', 'huge.png', async () => Buffer.alloc(Number(process.env.MAX_UPLOAD_BYTES) + 1, 1), 'FileTooLarge'],
    [
      'an unsupported format (SVG)',
      'vector.svg',
      async () => '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><rect width="200" height="200"/></svg>',
      'UnsupportedFormat',
    ],
  ];

  it.each(cases)('%s', async (_what, name, body, code) => {
    const batch = newBatch();
    await put(`uploads/demo/${batch}/good.png`, NOT_CAT);

    await put(`uploads/demo/${batch}/${name}`, await body());
    const s = await settled(batch, 2);

    const items = await images(batch);
    const failed = items.find((i) => i.op_status === 'fail');
    expect(failed).toMatchObject({ file_name: name, err_code: code });
    expect(failed!.err_msg).toEqual(expect.any(String));
    expect(items.find((i) => i.file_name === 'good.png')).toMatchObject({ op_status: 'success' });
    expect(s).toMatchObject({ n_total: 2, n_success: 1, n_fail: 1 });
    expect(await keysUnder(`failed/demo/${batch}/`)).toEqual([`failed/demo/${batch}/${name}`]);
    expect(await keysUnder(`uploads/demo/${batch}/`)).toEqual([]);
  });

  it('moves a key outside the layout under failed/_invalid/ without a record', async () => {
    const stray = `uploads/${newBatch()}-stray.png`;

    await put(stray, NOT_CAT);
    await waitFor(async () => ((await keysUnder(`failed/_invalid/${stray}`)).length ? true : undefined), 'the stray upload to move');
    // A move is a copy, then the delete of the source: the copy shows before the upload is gone.
    await bridgeIdle();

    await expect(aws.s3.send(new HeadObjectCommand({ Bucket: BUCKET(), Key: stray }))).rejects.toMatchObject({ name: 'NotFound' });
  });
});

async function seedBatch(batchId: string, owner: string, counts: Partial<BatchItem>): Promise<BatchItem> {
  const item: BatchItem = {
    ...toBatchItem(batchSummary({ clientId: owner, batchId, now: Date.now(), debug: false, retentionDays: 30 })),
    ...counts,
  };
  await aws.ddb.send(new PutCommand({ TableName: TABLE(), Item: item }));
  return item;
}

/** A valid PNG header and IHDR declaring width x height, with one tiny IDAT: a decompression bomb's shape. */
function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const idat = deflateSync(Buffer.alloc(1024));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
