// A re-detection survives `npm start` killed with SIGKILL in its middle (docs/decisions/0033-redetect.md): its images'
// messages are journaled on the uploads queue before POST …:redetect answers, so the restarted stack answers the rest,
// and the batch ends done with every image answered once more and its counters equal to what its records say (a
// counter move a crash lost between an answer and its count is recounted when that image's message comes again).

import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { tempDataDir, waitFor } from '../helpers';
import {
  api,
  distinctImages,
  doneWithin,
  endStackTrial,
  type StackProcess,
  seededRandom,
  startStackProcess,
  uploadImages,
  withStackLog,
} from '../helpers/stack-process';

const IMAGES = 8;
/** Slow enough answers that the run is still going when the stack is killed; short leases and sweeps after the restart. */
const STACK_ENV = {
  ICECAT_DETECTOR_LATENCY_MS: '300',
  CLAIM_LEASE_SECONDS: '10',
  ICECAT_RECONCILE_INTERVAL_SECONDS: '1',
  ICECAT_RECONCILE_GRACE_SECONDS: '1',
};

interface Record_ {
  op_status: string;
  rek_iscat?: boolean;
  prev?: unknown;
  rd_run?: string;
  reused?: boolean;
  dup_count?: number;
}

async function records(stack: StackProcess, batchId: string): Promise<{ summary: Record<string, unknown>; images: Record_[] }> {
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.dynamodbUrl));
  try {
    const out = await ddb.send(
      new QueryCommand({
        TableName: LOCAL_NAMES.table,
        KeyConditionExpression: 'batch_id = :p',
        ExpressionAttributeValues: { ':p': `demo#${batchId}` },
        ConsistentRead: true,
      }),
    );
    const items = out.Items ?? [];
    return {
      summary: items.find((i) => i.img_fprint === '#BATCH') as Record<string, unknown>,
      images: items.filter((i) => i.img_fprint !== '#BATCH') as Record_[],
    };
  } finally {
    ddb.destroy();
  }
}

describe('a re-detection when npm start is killed in its middle', () => {
  it('ends done after the restart, every image answered again, counters equal to the records', async () => {
    const dir = tempDataDir('icecat-redetect-crash-');
    const dataDir = path.join(dir, 'data');
    const logFile = path.join(dir, 'stack.log');
    mkdirSync(dataDir);
    let stack = await startStackProcess(dataDir, logFile, STACK_ENV);
    try {
      // Arrange: a done batch of distinct images.
      const key = readFileSync(path.join(dataDir, 'demo-api-key'), 'utf8').trim();
      const batchId = 'redetect-crash';
      const files = Array.from({ length: IMAGES }, (_, i) => ({
        name: `img-${String(i).padStart(2, '0')}.png`,
        contentType: 'image/png',
        size: 100_000,
      }));
      expect((await api(stack, key, 'POST', '/v1/batches', { batchId, files })).status).toBe(201);
      expect(await uploadImages(stack, batchId, await distinctImages(IMAGES, seededRandom(33)))).toEqual([]);
      await doneWithin(stack, key, batchId, 60_000);
      const accepted = ((await api(stack, key, 'GET', '/v1/usage')).body.images as { accepted: number }).accepted;

      // Act: every image again; SIGKILL once the first answers are written.
      const started = await api(stack, key, 'POST', `/v1/batches/${batchId}:redetect`, { all: true });
      await waitFor(async () => (await records(stack, batchId)).images.some((i) => i.prev !== undefined), {
        intervalMs: 20,
        what: 'a first new answer',
      });
      const atKill = await records(stack, batchId);
      stack.signal('SIGKILL');
      await stack.exited;
      stack = await startStackProcess(dataDir, logFile, STACK_ENV);
      const done = await doneWithin(stack, key, batchId, 90_000);

      // Assert
      expect(started.body).toMatchObject({ newCalls: IMAGES, batch: { status: 'processing' } });
      expect(atKill.images.filter((i) => i.prev === undefined).length).toBeGreaterThan(0);
      const after = await records(stack, batchId);
      expect(after.images.filter((i) => i.prev !== undefined && i.rd_run === undefined)).toHaveLength(IMAGES);
      expect(after.summary.rd_run).toBeUndefined();
      const cats = after.images.filter((i) => i.rek_iscat === true).length;
      expect(done.counts).toEqual({
        total: IMAGES,
        pending: 0,
        success: IMAGES,
        fail: 0,
        duplicate: 0,
        reused: after.images.filter((i) => i.reused === true).length,
        cats,
        reviewed: 0,
        corrected: 0,
      });
      // The re-detections counted once against the day's images, whatever the crash.
      expect(((await api(stack, key, 'GET', '/v1/usage')).body.images as { accepted: number }).accepted).toBe(accepted + IMAGES);
    } catch (err) {
      throw withStackLog(err, logFile);
    } finally {
      await endStackTrial(stack, dir);
    }
  }, 240_000);
});
