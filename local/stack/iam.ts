// The local stack's functions as IAM sees them (local/iam/iam.ts): the roles read at the start, each function built as
// itself, and what the sweeps the stack runs in-process (the reconcile and expire functions' work) sign and send as.

import type { S3Client } from '@aws-sdk/client-s3';
import type { IngestWiring } from '../../functions/ingest/app';
import { documentClientOf } from '../../lib/aws/clients';
import type { JobQueue } from '../../lib/jobs/queue';
import type { TableRef } from '../../lib/store/table/access';
import { LOCAL_NAMES } from '../contract';
import { localDynamoClient } from '../dynamodb/dynamodb';
import { functionCredentials, functionOfAccessKey, type LocalIam, loadLocalIam } from '../iam/iam';
import { buildAs } from '../iam/signing';
import { checkConsumer, senderAs, sqsError } from '../queue/iam';
import type { BatchHandler } from '../queue/options';
import { localS3Client } from '../s3/s3';
import { type Closable, loadIngestHandler, ROOT } from './services';

/** The roles the local stack checks its functions against: resources/roles.yml, or `rolesFile` (ICECAT_IAM_ROLES_FILE). */
export function stackIam(rolesFile?: string): LocalIam {
  const iam = loadLocalIam({ root: ROOT, table: LOCAL_NAMES.table, bucket: LOCAL_NAMES.bucket, rolesFile });
  // In the background while the stack starts: a failure here fails the first request of that service again, loudly.
  iam.warm().catch(() => undefined);
  return iam;
}

/** The ingest built as itself, sending completion callbacks as itself, polling the uploads queue with its role. */
export async function loadIngestAs(iam: LocalIam, wiring: IngestWiring): Promise<BatchHandler> {
  await checkConsumer(iam, 'ingest', 'uploads', ['sqs:ChangeMessageVisibility']);
  return buildAs('ingest', () => loadIngestHandler({ ...wiring, callbacks: senderAs(iam, 'ingest', 'callbacks', wiring.callbacks) }));
}

/** The detector's check of a DetectLabels call: rekognition:DetectLabels (no resource ARN) for a function's key. */
export function detectorAuthorizer(iam: LocalIam): (authorization: string | undefined) => Promise<string | undefined> {
  return async (authorization) => {
    const fn = functionOfAccessKey(/Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1]);
    if (fn === undefined) return undefined;
    return (await iam.refusal(fn, [{ action: 'rekognition:DetectLabels', resource: '*' }]))?.message;
  };
}

/** A client of the local S3 signing as `fn`. */
export const s3ClientAs = (fn: string, endpoint: string): S3Client => localS3Client(endpoint, { credentials: functionCredentials(fn) });

/** A document client of the local DynamoDB signing as `fn`, destroyed at the stack's stop. */
export function documentClientAs(fn: string, endpoint: string, started: Closable[]): TableRef['ddb'] {
  const client = localDynamoClient(endpoint, { credentials: functionCredentials(fn) });
  started.push({ name: `${fn} client`, close: async () => client.destroy() });
  return documentClientOf(client);
}

/** `queue` as `fn` sends to `queueName` (SQS's checks of local/queue/iam.ts). */
export const queueAs = (iam: LocalIam, fn: string, queueName: string, queue: JobQueue): JobQueue => senderAs(iam, fn, queueName, queue);

/** The check before each of the reconcile function's sends to the uploads queue (SendMessageBatch is SendMessage). */
export function sendCheckAs(iam: LocalIam, fn: string, queueName: string): () => Promise<void> {
  const resource = iam.queueArn(queueName);
  return async () => {
    const refusal = await iam.refusal(fn, [{ action: 'sqs:SendMessage', resource }]);
    if (refusal) throw sqsError('AccessDenied', refusal.message.replaceAll('sqs:SendMessage', 'sqs:sendmessage'), 403);
  };
}
