// The importTask function driven as S3 Batch Operations invokes it (docs/decisions/0042), for the run against an AWS
// implementation (`npm run test:aws`, moto): S3 Batch Operations itself is not there (moto's S3 Control has no jobs),
// so the invocation is AWS's documented schema 2.0 event (events/) re-aimed at one object, handed to `invoke` (the
// function's zip run as Lambda runs it, with its role), and what it did is read back from the deployed uploads queue
// and table. Self-contained: give it the queue's URL, the table, the endpoints and an invoke; it throws on the first
// thing that is not as AWS would have it, and answers what it checked.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { encodeManifestKey, type S3BatchResponse, s3BatchInvocationFor } from '../../events/s3-batch-operations';
import { newImport } from '../../lib/api/import-batch';
import { importRef } from '../../lib/import/enqueue';
import { importMessageIn } from '../../lib/import/message';
import { newBatch, putBatchRequest } from '../../lib/store/batch/summary';
import { batchKey, uploadItemKey } from '../../lib/store/table/schema';

export interface ImportTaskDrive {
  /** Runs the importTask function on one invocation event and answers its response (the zip's handler, with its role). */
  invoke(event: unknown): Promise<unknown>;
  /** The uploads queue the function sends to (its INGEST_QUEUE_URL). */
  queueUrl: string;
  sqsEndpoint: string;
  dynamodbEndpoint: string;
  tableName: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** The object imported: a bucket listed in importSourceBuckets (nothing is read from it). */
  bucket?: string;
}

export class ImportTaskDriveError extends Error {
  override name = 'ImportTaskDriveError';
}

const check = (ok: boolean, what: string, got: unknown): void => {
  if (!ok) throw new ImportTaskDriveError(`${what}; got ${JSON.stringify(got)}`);
};

/** Runs the invocations and answers what each checked. */
export async function driveImportTask(d: ImportTaskDrive): Promise<string[]> {
  const config = { region: d.region ?? 'us-east-1', credentials: d.credentials ?? { accessKeyId: 'test', secretAccessKey: 'test' } };
  const sqs = new SQSClient({ ...config, endpoint: d.sqsEndpoint });
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...config, endpoint: d.dynamodbEndpoint }));
  const bucket = d.bucket ?? 'acme-photos';
  const batchId = `drive-${Date.now().toString(36)}`;
  const expiresAt = Math.floor(Date.now() / 1000) + 86400;
  const args = { clientId: 'acme', batchId, expiresAt: String(expiresAt), allow: JSON.stringify([`s3://${bucket}/2024/`]) };
  const key = '2024/trip/cat 1+café.jpg';
  const event = s3BatchInvocationFor(args, { bucket, encodedKey: encodeManifestKey(key), taskId: 'drive-task-1' });
  const checked: string[] = [];
  // The import's batch, as the batches function makes it before it starts the job: its progress at 0.
  const batch = newBatch({ clientId: 'acme', batchId, now: Date.now(), debug: false, retentionDays: 1 });
  batch.import = { ...newImport({ bucket, prefix: '2024/' }) };
  await ddb.send(new PutCommand(putBatchRequest(d.tableName, batch)));

  const first = (await d.invoke(event)) as S3BatchResponse;
  check(
    first.invocationSchemaVersion === '2.0' && first.invocationId === event.invocationId && first.results.length === 1,
    'the response names the invocation and answers its one task',
    first,
  );
  check(first.results[0]?.taskId === 'drive-task-1' && first.results[0]?.resultCode === 'Succeeded', 'the task Succeeded', first.results);
  checked.push('an in-source object: Succeeded, in the response Batch Operations expects');

  const received = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: d.queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 5,
      MessageSystemAttributeNames: ['MessageGroupId'],
    }),
  );
  const ours = (received.Messages ?? []).filter((m) => importMessageIn(m.Body ?? '')?.batchId === batchId);
  check(
    ours.length === 1,
    'one import message on the uploads queue',
    received.Messages?.map((m) => m.Body),
  );
  const message = importMessageIn(ours[0]?.Body ?? '');
  check(
    message?.source.bucket === bucket && message.source.key === key && message.clientId === 'acme',
    'the message names the decoded object',
    message,
  );
  check(ours[0]?.Attributes?.MessageGroupId === 'acme', "it is in its client's message group", ours[0]?.Attributes);
  await sqs.send(new DeleteMessageCommand({ QueueUrl: d.queueUrl, ReceiptHandle: ours[0]?.ReceiptHandle }));
  checked.push("its message on the uploads queue, decoded key, in the client's group");

  const ref = importRef({ clientId: 'acme', batchId, expiresAt }, { bucket, key });
  const item = await ddb.send(new GetCommand({ TableName: d.tableName, Key: uploadItemKey(ref), ConsistentRead: true }));
  check(
    item.Item?.imp_send === 'sent' && typeof item.Item?.quota_day === 'string',
    'the upload item is marked sent and counted',
    item.Item,
  );
  checked.push('its upload item: send mark sent, quota counted');

  const again = (await d.invoke(event)) as S3BatchResponse;
  check(
    again.results[0]?.resultCode === 'Succeeded' && /^sent before/.test(again.results[0]?.resultString ?? ''),
    'a redrive sends nothing',
    again,
  );
  const outside = s3BatchInvocationFor(args, { bucket, encodedKey: '2023/a.jpg', taskId: 'drive-task-2' });
  const refused = (await d.invoke(outside)) as S3BatchResponse;
  check(refused.results[0]?.resultCode === 'PermanentFailure', 'an object outside the source fails permanently', refused);
  const after = await sqs.send(new ReceiveMessageCommand({ QueueUrl: d.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
  check(!(after.Messages ?? []).some((m) => importMessageIn(m.Body ?? '')?.batchId === batchId), 'nothing more was sent', after.Messages);
  checked.push('a redrive: sent before, nothing sent; an object outside the source: PermanentFailure');

  const notes = s3BatchInvocationFor(args, { bucket, encodedKey: '2024/trip/notes.txt', taskId: 'drive-task-3' });
  const skipped = (await d.invoke(notes)) as S3BatchResponse;
  check(
    skipped.results[0]?.resultCode === 'Succeeded' &&
      /^skipped: .* is not an image by its name$/.test(skipped.results[0]?.resultString ?? ''),
    'a key that is no image by its name is skipped, Succeeded',
    skipped,
  );
  await d.invoke(notes);
  const summary = await ddb.send(new GetCommand({ TableName: d.tableName, Key: batchKey('acme', batchId), ConsistentRead: true }));
  const imp = summary.Item?.imp as { listed?: number; enqueued?: number; skipped?: number } | undefined;
  check(
    imp?.listed === 2 && imp.enqueued === 1 && imp.skipped === 1,
    "the import's progress counts each object once, redrives too (listed 2, enqueued 1, skipped 1)",
    imp,
  );
  checked.push("a non-image: skipped, Succeeded; the import's progress on its summary: listed 2, enqueued 1, skipped 1 after redrives");
  return checked;
}
