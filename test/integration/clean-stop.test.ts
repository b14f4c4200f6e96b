// A restarted local stack hands back the attempts of the uploads it was handling only when it stopped cleanly: a crash
// may be the upload's own doing (the EXIF bomb once ran the process out of memory), and forgiving it then would
// crash-loop the stack on that upload and count other clients' uploads twice. A data dir after a crash holds the
// queue's journal with messages received and not deleted, and no mark of a clean stop; after a clean stop, the mark too.

import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { s3EventMessage, s3EventRecord } from '../../lib/reconcile/s3-event';
import { BatchStore } from '../../lib/store/batch-store';
import { CLEAN_STOP_FILE } from '../../local/stack/interrupted-attempts';
import { stackEnv, startTestStack, tempDataDir, uniqueId } from '../helpers';

const store = () =>
  new BatchStore({
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: stackEnv('AWS_ENDPOINT_URL_DYNAMODB') })),
    tableName: stackEnv('TABLE_NAME'),
    transactions: false,
  });

/** A data dir as a stack leaves it while it handles `key` (received once, not deleted), with or without the clean-stop mark. */
function interruptedDataDir(key: string, etag: string, clean: boolean): string {
  const dataDir = tempDataDir('icecat-clean-stop-');
  const body = s3EventMessage(
    s3EventRecord(
      { operation: 'Put', bucket: stackEnv('BUCKET_NAME'), key, size: 100, eTag: etag, sourceIp: '127.0.0.1', time: new Date() },
      { region: 'us-east-1' },
    ),
  );
  const message = {
    op: 'send',
    messageId: uniqueId('m'),
    body,
    md5OfBody: createHash('md5').update(body).digest('hex'),
    sentAt: Date.now(),
    receiveCount: 1,
  };
  writeFileSync(path.join(dataDir, 'queue.journal'), JSON.stringify(message) + '\n');
  if (clean) writeFileSync(path.join(dataDir, CLEAN_STOP_FILE), 'stopped\n');
  return dataDir;
}

/** Starts a stack on the data dir (sharing the test stack's table), lets it deliver the journal's message to a handler that does nothing, and stops it. */
async function restartOn(dataDir: string): Promise<string[]> {
  const delivered: string[] = [];
  const stack = await startTestStack({
    dataDir,
    dynamodbEndpoint: stackEnv('AWS_ENDPOINT_URL_DYNAMODB'),
    reconcile: false,
    expiry: false,
    ingestHandler: async (event) => {
      delivered.push(...event.Records.map((r) => r.body));
    },
  });
  try {
    await stack.whenIdle(20_000);
  } finally {
    await stack.stop();
  }
  return delivered;
}

describe('attempts handed back at a restart', () => {
  const upload = (batchId: string) => ({
    clientId: 'demo',
    batchId,
    key: `uploads/demo/${batchId}/a.jpg`,
    etag: 'e1',
    expiresAt: Math.floor(Date.now() / 1000) + 86400,
  });

  it('keeps the attempt of an upload interrupted by a crash (no clean-stop mark) counted', async () => {
    const u = upload(uniqueId('crash'));
    await store().startAttempt(u);
    await store().startAttempt(u);

    const delivered = await restartOn(interruptedDataDir(u.key, u.etag, false));

    expect(delivered).toHaveLength(1);
    expect((await store().startAttempt(u)).attempts).toBe(3);
  }, 60_000);

  it('hands the attempt back after a clean stop', async () => {
    const u = upload(uniqueId('clean'));
    await store().startAttempt(u);
    await store().startAttempt(u);
    const dataDir = interruptedDataDir(u.key, u.etag, true);

    await restartOn(dataDir);

    expect((await store().startAttempt(u)).attempts).toBe(2);
  }, 60_000);

  it('leaves the mark at a stop, and the next start takes it away', async () => {
    const dataDir = tempDataDir('icecat-clean-stop-');
    const stack = await startTestStack({
      dataDir,
      dynamodbEndpoint: stackEnv('AWS_ENDPOINT_URL_DYNAMODB'),
      reconcile: false,
      expiry: false,
    });
    const markedWhileRunning = existsSync(path.join(dataDir, CLEAN_STOP_FILE));
    await stack.stop();
    const markedAfterStop = existsSync(path.join(dataDir, CLEAN_STOP_FILE));
    const again = await startTestStack({
      dataDir,
      dynamodbEndpoint: stackEnv('AWS_ENDPOINT_URL_DYNAMODB'),
      reconcile: false,
      expiry: false,
    });
    const markedAfterStart = existsSync(path.join(dataDir, CLEAN_STOP_FILE));
    await again.stop();

    expect([markedWhileRunning, markedAfterStop, markedAfterStart]).toEqual([false, true, false]);
  }, 60_000);
});
