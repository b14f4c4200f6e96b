// An import survives `npm start` killed with SIGKILL in the middle of its listing (docs/imports.md): the lister's
// cursor is checkpointed on the batch after each page of ListObjectsV2 (1,000 keys), and each object's send is marked
// on its own upload item, so the restarted stack lists on from the checkpoint, re-doing at most the page it was in,
// and sends no object twice. The source, 2,600 keys in three pages (images every 200th key, a third of them repeats;
// the rest not images by name, listed and skipped), is written before the stack starts (test/helpers/s3-seed.ts).

import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { deadLetters, tempDataDir, waitFor } from '../helpers';
import { seedBucket } from '../helpers/s3-seed';
import {
  api,
  distinctImages,
  doneWithin,
  endStackTrial,
  type StackProcess,
  seededRandom,
  startStackProcess,
  withStackLog,
} from '../helpers/stack-process';

const KEYS = 2600;
const PAGE = 1000;
const EVERY = 200;
const IMAGES = KEYS / EVERY;
const DISTINCT = 9;
const BUCKET = 'crash-library';
const BATCH = 'import-crash';
/**
 * Its own dynalite under the strict pass too (whose stacks share one DynamoDB Local): the demo client's day of usage
 * and the batch's records checked here are then this trial's alone. Short claim leases: an image the kill caught
 * claimed is taken again soon after the restart.
 */
const STACK_ENV = { ICECAT_DYNAMODB_ENDPOINT: '', CLAIM_LEASE_SECONDS: '5' };

const keyOf = (i: number) => `lib/${String(i).padStart(5, '0')}.${i % EVERY === 0 ? 'png' : 'txt'}`;
const imageKeys = Array.from({ length: IMAGES }, (_, n) => keyOf(n * EVERY));

interface ImportState {
  state: string;
  listed: number;
  enqueued: number;
  skipped: number;
}

/** The batch's image records, straight from the table: each one's fingerprint, status and answer time. */
async function records(stack: StackProcess): Promise<{ img_fprint: string; op_status: string; rek_ts?: number; reused?: boolean }[]> {
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.dynamodbUrl));
  try {
    const out = await ddb.send(
      new QueryCommand({
        TableName: LOCAL_NAMES.table,
        KeyConditionExpression: 'batch_id = :p',
        ExpressionAttributeValues: { ':p': `demo#${BATCH}` },
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).filter((i) => i.img_fprint !== '#BATCH' && typeof i.op_status === 'string') as Awaited<
      ReturnType<typeof records>
    >;
  } finally {
    ddb.destroy();
  }
}

const detectCalls = async (stack: StackProcess) =>
  ((await (await fetch(`${stack.rekognitionUrl}/__stats`)).json()) as { detectLabels: number }).detectLabels;

describe('an import when npm start is killed in the middle of its listing', () => {
  it('ends done after the restart, every image enqueued and recorded once, no answer paid twice', async () => {
    const dir = tempDataDir('icecat-import-crash-');
    const dataDir = path.join(dir, 'data');
    const logFile = path.join(dir, 'stack.log');
    mkdirSync(dataDir);
    // Arrange: the source, then the stack, the demo client allowed it.
    const pixels = await distinctImages(DISTINCT, seededRandom(39));
    await seedBucket(
      dataDir,
      BUCKET,
      Array.from({ length: KEYS }, (_, i) =>
        i % EVERY === 0
          ? { key: keyOf(i), body: pixels[(i / EVERY) % DISTINCT]!, contentType: 'image/png' }
          : { key: keyOf(i), body: Buffer.from(`note ${i}`), contentType: 'text/plain' },
      ),
    );
    let stack = await startStackProcess(dataDir, logFile, STACK_ENV);
    try {
      const key = readFileSync(path.join(dataDir, 'demo-api-key'), 'utf8').trim();
      const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.dynamodbUrl));
      await new ClientSourcesStore({ ddb, tableName: LOCAL_NAMES.table }).change('demo', [`s3://${BUCKET}/lib/`], []);
      ddb.destroy();

      // Act: the import started; SIGKILL as soon as a page's checkpoint shows, before the listing ends; restart.
      const created = await api(stack, key, 'POST', '/v1/batches', { batchId: BATCH, source: { bucket: BUCKET, prefix: 'lib/' } });
      const atKill = await waitFor(
        async () => {
          const b = (await api(stack, key, 'GET', `/v1/batches/${BATCH}`)).body as { import?: ImportState };
          if (b.import?.state === 'listed') throw new Error(`the listing ended before the kill: ${JSON.stringify(b.import)}`);
          return (b.import?.listed ?? 0) > 0 ? b.import : undefined;
        },
        { intervalMs: 10, timeoutMs: 60_000, what: 'the first page checkpointed' },
      );
      stack.signal('SIGKILL');
      await stack.exited;
      const killedAt = Date.now();
      stack = await startStackProcess(dataDir, logFile, STACK_ENV);
      const done = await doneWithin(stack, key, BATCH, 120_000);

      // Assert: the kill came mid-listing, after a page's checkpoint.
      expect(created.status).toBe(201);
      expect(atKill?.state).toBe('listing');
      expect([PAGE, 2 * PAGE]).toContain(atKill?.listed);
      // Listed on from the checkpoint: a page listed from an earlier cursor would count its keys twice, one skipped
      // would leave them out.
      expect(done.import).toMatchObject({ state: 'listed', listed: KEYS, enqueued: IMAGES, skipped: KEYS - IMAGES });
      expect(done.counts).toMatchObject({ total: IMAGES, success: DISTINCT, duplicate: IMAGES - DISTINCT, fail: 0, pending: 0 });
      // Each image once: one report row per key, each counted once against the day's quota.
      const report = await fetch(`${stack.apiUrl}/v1/batches/${BATCH}/report?format=s3-batch-operations`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const rows = (await report.text()).trim().split('\n');
      expect(rows.map((r) => r.split(',')[1]).sort()).toEqual(imageKeys);
      expect(((await api(stack, key, 'GET', '/v1/usage')).body.images as { accepted: number }).accepted).toBe(IMAGES);
      // One record per distinct image, and no DetectLabels call after the restart beyond the answers written since
      // (and the one the stack makes at its start to learn the detector's model, local/stack/record-detector-model.ts).
      const recs = await records(stack);
      expect(recs).toHaveLength(DISTINCT);
      const answeredSince = recs.filter((r) => r.op_status === 'success' && !r.reused && (r.rek_ts ?? 0) >= killedAt);
      expect(await detectCalls(stack)).toBe(answeredSince.length + 1);
      expect(await deadLetters(stack.bridgeUrl)).toEqual([]);
    } catch (err) {
      throw withStackLog(err, logFile);
    } finally {
      await endStackTrial(stack, dir);
    }
  }, 300_000);
});
