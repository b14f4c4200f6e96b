// IAM on the local stack (local/iam/iam.ts): a request signed with a function's own key is refused, with the service's own
// AccessDenied, where that function's role (resources/roles.yml as the template states it) does not allow it. Through
// the AWS SDK over loopback, as each function's clients send. Last, a stack started with one statement taken out of
// the ingest's role (ICECAT_IAM_ROLES_FILE) classifies no new image: the reuse lookup is refused, as on AWS.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { DetectLabelsCommand, RekognitionClient } from '@aws-sdk/client-rekognition';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { QueryCommand as DocumentQueryCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import sharp from 'sharp';
import { reusableResultRequest } from '../../lib/store/image/reuse';
import { INDEX } from '../../lib/store/table/schema';
import { LOCAL_NAMES } from '../../local/contract';
import { functionCredentials } from '../../local/iam/iam';
import { localS3Client } from '../../local/s3/s3';
import { stackEnv, tempDataDir, uniqueId, waitFor } from '../helpers';
import { readBatch, type StackProcess, startStackProcess, uploadKey } from '../helpers/stack-process';

const ROOT = path.join(__dirname, '..', '..');
const dynamoAs = (fn: string, endpoint = stackEnv('AWS_ENDPOINT_URL_DYNAMODB')) =>
  new DynamoDBClient({ endpoint, region: LOCAL_NAMES.region, credentials: functionCredentials(fn), maxAttempts: 1 });
const s3As = (fn: string): S3Client =>
  localS3Client(stackEnv('AWS_ENDPOINT_URL_S3'), { credentials: functionCredentials(fn), maxAttempts: 1 });

/** The error a call answers (its name and HTTP status), or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return `${e.name} ${e.$metadata?.httpStatusCode}`;
  }
}

/** The ingest's reuse lookup, sent as its document client sends it. */
const reuseLookup = (client: DynamoDBClient) =>
  DynamoDBDocumentClient.from(client).send(new DocumentQueryCommand(reusableResultRequest(LOCAL_NAMES.table, 'demo', 'f'.repeat(32), 1)));

describe('DynamoDB: each function as its role allows', () => {
  it('lets the ingest query the client-fprint index (its reuse lookup) and refuses another index it never reads', async () => {
    const ingest = dynamoAs('ingest');
    const other = new QueryCommand({
      TableName: LOCAL_NAMES.table,
      IndexName: INDEX.clientTime,
      KeyConditionExpression: 'client_id = :c',
      ExpressionAttributeValues: { ':c': { S: 'demo' } },
    });

    expect(await outcome(reuseLookup(ingest))).toBe('ok');
    const refused = await ingest.send(other).catch((err: Error) => err);
    expect(refused).toMatchObject({ name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });
    expect((refused as Error).message).toMatch(
      /^User: arn:aws:sts::\d{12}:assumed-role\/\S+IngestRole\/\S+ingest is not authorized to perform: dynamodb:Query on resource: arn:aws:dynamodb:us-east-1:\d{12}:table\/IceCatWrangler\/index\/client-time because no identity-based policy allows the dynamodb:Query action$/,
    );
  });

  it('refuses every write to the api function, whose role reads only', async () => {
    const put = new PutItemCommand({ TableName: LOCAL_NAMES.table, Item: { batch_id: { S: 'x' }, img_fprint: { S: 'y' } } });

    expect(await outcome(dynamoAs('api').send(put))).toBe('AccessDeniedException 400');
  });

  it("keeps the operator's key (the stack's and the tests' own clients) unchecked", async () => {
    const operator = new DynamoDBClient({ endpoint: stackEnv('AWS_ENDPOINT_URL_DYNAMODB'), region: LOCAL_NAMES.region, maxAttempts: 1 });

    expect(await outcome(reuseLookup(operator))).toBe('ok');
  });
});

describe('S3: object and bucket ARNs, condition keys', () => {
  const bucket = LOCAL_NAMES.bucket;

  it('lets the ingest read uploads/ and refuses it exports/, with 403 AccessDenied', async () => {
    const key = `uploads/demo/${uniqueId('iam')}/x.png`;
    await s3As('batches').send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));

    expect(await outcome(s3As('ingest').send(new GetObjectCommand({ Bucket: bucket, Key: key })))).toBe('ok');
    expect(await outcome(s3As('ingest').send(new GetObjectCommand({ Bucket: bucket, Key: 'exports/demo/b/x.csv' })))).toBe(
      'AccessDenied 403',
    );
    expect(await outcome(s3As('api').send(new PutObjectCommand({ Bucket: bucket, Key: 'processed/demo/b/x.png', Body: 'x' })))).toBe(
      'AccessDenied 403',
    );
  });

  it('lets the reconcile function list uploads/ only (its s3:prefix condition)', async () => {
    const list = (Prefix: string) => s3As('reconcile').send(new ListObjectsV2Command({ Bucket: bucket, Prefix }));

    expect(await outcome(list('uploads/'))).toBe('ok');
    expect(await outcome(list('processed/'))).toBe('AccessDenied 403');
  });

  it("answers a presigned GET as the signer's role allows it", async () => {
    const key = `processed/demo/${uniqueId('iam')}/x.png`;
    await localS3Client(stackEnv('AWS_ENDPOINT_URL_S3')).send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));
    const url = (fn: string, k: string) => getSignedUrl(s3As(fn), new GetObjectCommand({ Bucket: bucket, Key: k }), { expiresIn: 60 });

    expect((await fetch(await url('api', key))).status).toBe(200);
    const refused = await fetch(await url('api', key.replace('processed/', 'uploads/')));
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('<Code>AccessDenied</Code>');
  });

  it('deletes what DeleteObjects may delete and answers the rest AccessDenied in its result', async () => {
    const key = `uploads/demo/${uniqueId('iam')}/x.png`;
    await s3As('batches').send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));

    const out = await s3As('ingest').send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: key }, { Key: 'exports/demo/b/x.csv' }] } }),
    );

    expect(out.Deleted?.map((d) => d.Key)).toEqual([key]);
    expect(out.Errors).toEqual([expect.objectContaining({ Key: 'exports/demo/b/x.csv', Code: 'AccessDenied' })]);
  });
});

describe('Rekognition', () => {
  it('answers DetectLabels for the ingest and AccessDeniedException for a role without it', async () => {
    const image = await sharp({ create: { width: 96, height: 96, channels: 3, background: '#888' } })
      .png()
      .toBuffer();
    const detect = (fn: string) =>
      new RekognitionClient({
        endpoint: stackEnv('AWS_ENDPOINT_URL_REKOGNITION'),
        region: LOCAL_NAMES.region,
        credentials: functionCredentials(fn),
        maxAttempts: 1,
      }).send(new DetectLabelsCommand({ Image: { Bytes: image }, MaxLabels: 5 }));

    expect(await outcome(detect('ingest'))).toBe('ok');
    expect(await outcome(detect('api'))).toBe('AccessDeniedException 400');
  });
});

describe('a role with one statement taken out', () => {
  let stack: StackProcess;
  let dataDir: string;
  const rolesFile = () => path.join(dataDir, 'roles-without-reuse-lookup.yml');

  beforeAll(async () => {
    dataDir = tempDataDir('icecat-iam-');
    // The ingest's role as it was before defect 1's fix: no Query of the client-fprint index.
    const roles = readFileSync(path.join(ROOT, 'resources', 'roles.yml'), 'utf8');
    const without = roles.replace(/\n {14}- Sid: FindEarlierAnswers\n(?: {16}.*\n)+/, '\n');
    expect(without).not.toBe(roles);
    writeFileSync(rolesFile(), without);
    stack = await startStackProcess(path.join(dataDir, 'data'), path.join(dataDir, 'stack.log'), {
      ICECAT_IAM_ROLES_FILE: rolesFile(),
      ICECAT_DYNAMODB_ENDPOINT: '',
    });
  }, 120_000);

  afterAll(async () => {
    stack?.signal('SIGTERM');
    await stack?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses the reuse lookup, and so classifies no new image', async () => {
    expect(await outcome(reuseLookup(dynamoAs('ingest', stack.dynamodbUrl)))).toBe('AccessDeniedException 400');

    const batchId = uniqueId('planted');
    const image = await sharp({ create: { width: 96, height: 96, channels: 3, background: '#a33' } })
      .png()
      .toBuffer();
    await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: uploadKey(batchId, 0), Body: image, ContentType: 'image/png' }));
    const apiKey = readFileSync(path.join(dataDir, 'data', 'demo-api-key'), 'utf8').trim();

    const state = await waitFor(
      async () => {
        const batch = await readBatch(stack, apiKey, batchId);
        return batch?.images.some((i) => i.status !== 'processing') ? batch : undefined;
      },
      { timeoutMs: 60_000, what: 'the image to end' },
    );
    expect(state.images.map((i) => i.status)).toEqual(['fail']);
    expect(stack.log()).toMatch(/AccessDeniedException[\s\S]*index\/client-fprint|index\/client-fprint[\s\S]*AccessDeniedException/);
  }, 90_000);
});
