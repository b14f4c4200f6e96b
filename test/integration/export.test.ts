// Export of a batch the stack's ingest really processed (a cat, non-cats, duplicates, a file that is not an image):
// one row per uploaded file, so the row count equals counts.total; a large export is streamed to the local S3 and
// read back through its presigned GET.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { exportImageOf, exportImages } from '../../lib/api/export-batch';
import { documentClientOf } from '../../lib/aws/clients';
import { type ExportFormat } from '../../lib/export/encode';
import { mapPages } from '../../lib/export/pages';
import type { ExportImage } from '../../lib/export/rows';
import { storeExport } from '../../lib/export/s3-export';
import { exportChunks, writeExport } from '../../lib/export/writer';
import { BatchImagePages, batchImagePages, ROWS_READ } from '../../lib/store/batch/pages';
import { getBatch } from '../../lib/store/batch/read';
import { toImage } from '../../lib/store/table/attributes';
import { cursorCodec } from '../../lib/store/table/cursor';
import { batchPartition, type ImageItem } from '../../lib/store/table/schema';
import { aws, stackEnv, uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { newClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));

/** The batch's images a page at a time (2 per page, so several pages), as the export route reads them. */
async function* imagePages(partitionKey: string): AsyncGenerator<ExportImage[]> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await aws().ddb.send(
      new QueryCommand({
        TableName: stackEnv('TABLE_NAME'),
        KeyConditionExpression: 'batch_id = :pk AND img_fprint > :summary',
        ExpressionAttributeValues: { ':pk': partitionKey, ':summary': '#BATCH' },
        Limit: 2,
        ExclusiveStartKey: startKey,
      }),
    );
    yield (page.Items ?? []).map((item) => exportImageOf(toImage(item as ImageItem)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

async function exportBatch(partitionKey: string, clientId: string, batchId: string, format: ExportFormat, inlineMaxBytes: number) {
  return writeExport(exportChunks(imagePages(partitionKey), format), {
    inlineMaxBytes,
    spill: (body) => storeExport(body, { s3: aws().s3, bucket: stackEnv('BUCKET_NAME'), clientId, batchId, format, urlSeconds: 900 }),
  });
}

describe('export of an ingested batch', () => {
  let clientId: string;
  const batchId = uniqueId('exp');
  let total = 0;

  beforeAll(async () => {
    ({ clientId } = await newClient('exp'));
    const files: [string, Buffer][] = [
      ['chelsea.png', fixture('chelsea.png')],
      ['copies/chelsea again.png', fixture('chelsea.png')],
      ['=chelsea,"3".png', fixture('chelsea.png')],
      ['coffee.png', fixture('coffee.png')],
      ['rocket.jpg', fixture('rocket.jpg')],
      ['notes.png', Buffer.from('not an image at all')],
    ];
    // The original first, so which upload is the duplicate is known.
    await uploadFile(`uploads/${clientId}/${batchId}/${files[0]![0]}`, files[0]![1], 'image/png');
    await waitForBridgeIdle();
    for (const [name, bytes] of files.slice(1)) await uploadFile(`uploads/${clientId}/${batchId}/${name}`, bytes, 'image/png');
    await waitForBridgeIdle();
    const ctx = { ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), cursors: cursorCodec(stackEnv('CURSOR_SECRET')) };
    total = (await getBatch(ctx, clientId, batchId))?.counts.total ?? 0;
  }, 120_000);

  it('has as many CSV rows as the batch has uploads (counts.total), duplicates and failures included', async () => {
    const out = await exportBatch(batchPartition(clientId, batchId), clientId, batchId, 'csv', 1 << 20);

    expect(total).toBe(6);
    expect(out.kind).toBe('inline');
    expect(out.rows).toBe(total);
    if (out.kind !== 'inline') return;
    const lines = out.body.split('\r\n').filter(Boolean);
    expect(lines).toHaveLength(total + 1);
    expect(lines.filter((l) => l.includes(',duplicate,'))).toEqual([
      expect.stringMatching(/^"'=chelsea,""3"".png",duplicate,.*,chelsea\.png,/),
      expect.stringMatching(/^copies\/chelsea again\.png,duplicate,.*,chelsea\.png,/),
    ]);
    expect(lines.find((l) => l.startsWith('notes.png,'))).toMatch(/^notes\.png,fail,,,,[^,]+,,NotAnImage,/);
  });

  it('streams a large export to S3 and hands back a presigned GET that reads the same rows', async () => {
    const out = await exportBatch(batchPartition(clientId, batchId), clientId, batchId, 'jsonl', 100);

    expect(out.kind).toBe('stored');
    if (out.kind !== 'stored') return;
    expect(out.stored.key).toMatch(new RegExp(`^exports/${clientId}/${batchId}/\\d{4}-\\d{2}-\\d{2}T[\\d-]+Z\\.jsonl$`));
    const res = await fetch(out.stored.url);
    expect(res.status).toBe(200);
    const rows = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file_name: string; status: string });
    expect(rows).toHaveLength(total);
    expect(out.rows).toBe(total);
    expect(rows.map((r) => r.status).sort()).toEqual(['duplicate', 'duplicate', 'fail', 'success', 'success', 'success']);
    const head = await aws().s3.send(new HeadObjectCommand({ Bucket: stackEnv('BUCKET_NAME'), Key: out.stored.key }));
    expect(head.ContentType).toMatch(/^application\/x-ndjson/);
    expect(head.ContentLength).toBe(out.bytes);
  });

  it.each(['csv', 'jsonl', 'megadetector'] as const)(
    'writes the same %s from what the export reads (its attributes, its page size) as from whole items',
    async (format) => {
      const context = { catMinConfidence: 80, doneAt: Date.UTC(2024, 5, 1) };
      const write = (pages: AsyncIterable<ExportImage[]>) =>
        writeExport(exportChunks(pages, format, context), { inlineMaxBytes: 1 << 20, spill: async () => 0 });
      const whole = await write(imagePages(batchPartition(clientId, batchId)));
      const read = await write(
        exportImages(new BatchImagePages({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }), clientId, batchId, format),
      );

      expect(read.kind).toBe('inline');
      expect(whole.kind).toBe('inline');
      if (read.kind !== 'inline' || whole.kind !== 'inline') return;
      expect(read.rows).toBe(total);
      expect(read.body).toBe(whole.body);
    },
  );

  it('keeps no page of the batch while it reads the next (each Query sent with the previous page unreachable)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const client = new DynamoDBClient({});
    let previous: WeakRef<object> | undefined;
    const alive: boolean[] = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        // A turn of the event loop first, so that nothing of the last page's job is left on the stack.
        await new Promise((resolve) => setImmediate(resolve));
        if (previous) {
          gc();
          alive.push(previous.deref() !== undefined);
        }
        return next(args);
      },
      { step: 'initialize', name: 'previousPageProbe' },
    );
    const ddb = documentClientOf(client);
    try {
      const pages = batchImagePages({ ddb, tableName: stackEnv('TABLE_NAME') }, clientId, batchId, { ...ROWS_READ, pageSize: 1 });
      const mapped = mapPages(pages, (page) => {
        previous = new WeakRef(page);
        return page.map(exportImageOf);
      });
      const out = await writeExport(exportChunks(mapped, 'csv'), { inlineMaxBytes: 1 << 20, spill: async () => 0 });

      expect(out.rows).toBe(total);
      // Four records (the duplicates are counted on their original): a Query each, and one that finds the end.
      expect(alive.length).toBeGreaterThanOrEqual(3);
      expect(alive.every((a) => !a)).toBe(true);
    } finally {
      ddb.destroy();
    }
  });
});

describe('storeExport', () => {
  it('uploads an export larger than one part (multipart) and reads back byte for byte', async () => {
    const clientId = uniqueId('exp-big');
    const line = `${'x'.repeat(120)}\n`;
    const lines = Math.ceil((6 * 1024 * 1024) / line.length);
    async function* big() {
      for (let i = 0; i < lines; i += 1000) yield Buffer.from(line.repeat(Math.min(1000, lines - i)));
    }
    const { Readable } = await import('node:stream');

    const stored = await storeExport(Readable.from(big()), {
      s3: aws().s3,
      bucket: stackEnv('BUCKET_NAME'),
      clientId,
      batchId: 'big',
      format: 'csv',
      urlSeconds: 60,
    });

    const res = await fetch(stored.url);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).toBe(lines * line.length);
    expect(body.subarray(0, line.length).toString()).toBe(line);
  });
});
