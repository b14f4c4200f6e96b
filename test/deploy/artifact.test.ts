// The ingest artifact is complete: unzipped alone into an empty folder and run with plain `node` (no project
// node_modules within reach), its handler loads sharp from the zip and processes real uploads on a local stack: a PNG,
// and a HEIC photo decoded by the libheif-js files the zip carries unmodified (in its own thread, heif-worker.cjs).
// The deployed zip is built for arm64 (serverless.yml), whose binaries cannot load on this x86-64 machine: the run
// uses its twin built for the machine's architecture, whose JavaScript is checked to be the deployed zip's, byte for
// byte (test/deploy/arm64-artifact.test.ts checks the arm64 binaries themselves).

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { registerClient } from '../../lib/auth/register';
import { Registrations } from '../../lib/store/client/registrations';
import { BATCH_SK, batchPartition, type ImageItem } from '../../lib/store/table/schema';
import type { Stack } from '../../local/stack/types';
import { bundleFunction } from '../../scripts/bundle';
import { extractZip } from '../../scripts/zip';
import { startTestStack, uniqueId } from '../helpers';
import { type ArtifactRun, DEPLOYED_WIRING, ensurePackaged, ROOT, runUnzippedHandler } from './packaged';

type RunResult = ArtifactRun<SQSBatchResponse>;

const runArtifactHandler = (dir: string, event: SQSEvent, env: Record<string, string>): Promise<RunResult> =>
  runUnzippedHandler(dir, './functions/ingest/handler.js', event, env);

let stack: Stack;
let dir: string;
let deployedDir: string;
let twinOut: string;
let run: RunResult;
let s3: S3Client;
let ddb: DynamoDBDocumentClient;
const batchId = uniqueId('artifact');
const uploadKey = `uploads/deploy-test/${batchId}/chelsea.png`;
const heicKey = `uploads/deploy-test/${batchId}/chelsea.heic`;

beforeAll(async () => {
  const packaged = await ensurePackaged();
  deployedDir = mkdtempSync(path.join(tmpdir(), 'icecat-artifact-deployed-'));
  await extractZip(packaged.artifact('ingest'), deployedDir);
  twinOut = mkdtempSync(path.join(tmpdir(), 'icecat-artifact-twin-'));
  const twin = await bundleFunction({
    name: 'ingest',
    handler: 'functions/ingest/handler.handler',
    architecture: process.arch === 'arm64' ? 'arm64' : 'x86_64',
    nodeTarget: `node${(packaged.service.provider.runtime as string).replace(/^nodejs(\d+)\.x$/, '$1')}`,
    projectDir: ROOT,
    outDir: twinOut,
  });
  dir = mkdtempSync(path.join(tmpdir(), 'icecat-artifact-'));
  await extractZip(twin.artifact, dir);

  // The stack's bridge hands over the exact SQS events it builds from the uploads, instead of processing them: both
  // uploads' records, in one event.
  let deliver: (event: SQSEvent) => void = () => undefined;
  const delivered = new Promise<SQSEvent>((resolve) => (deliver = resolve));
  const records: SQSEvent['Records'] = [];
  stack = await startTestStack({
    detector: true,
    // The in-process detector reads S3Object images with clients built from process.env.
    applyEnv: true,
    ingestHandler: async (event) => {
      records.push(...event.Records);
      if (records.length >= 2) deliver({ Records: records });
      return { batchItemFailures: [] };
    },
  });
  const credentials = { accessKeyId: stack.env.AWS_ACCESS_KEY_ID as string, secretAccessKey: stack.env.AWS_SECRET_ACCESS_KEY as string };
  s3 = new S3Client({
    endpoint: stack.endpoints.s3,
    region: stack.env.AWS_REGION,
    credentials,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: stack.endpoints.dynamodb, region: stack.env.AWS_REGION, credentials }));
  await registerClient(new Registrations({ ddb, tableName: stack.table }), 'deploy-test');

  await s3.send(
    new PutObjectCommand({
      Bucket: stack.bucket,
      Key: uploadKey,
      Body: readFileSync(path.join(ROOT, 'test', 'fixtures', 'chelsea.png')),
      ContentType: 'image/png',
    }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: stack.bucket,
      Key: heicKey,
      Body: readFileSync(path.join(ROOT, 'test', 'fixtures', 'chelsea.heic')),
      ContentType: 'image/heic',
    }),
  );
  run = await runArtifactHandler(dir, await delivered, { ...stack.env, ...DEPLOYED_WIRING });
}, 300_000);

afterAll(async () => {
  s3?.destroy();
  ddb?.destroy();
  await stack?.stop();
  for (const d of [dir, deployedDir, twinOut]) if (d) rmSync(d, { recursive: true, force: true });
});

it('runs the JavaScript of the deployed zip, byte for byte', () => {
  const js = (root: string) => readFileSync(path.join(root, 'functions', 'ingest', 'handler.js'));
  expect(js(dir).equals(js(deployedDir))).toBe(true);
});

it('loads sharp from the native binaries inside the artifact', () => {
  expect(run.nativeFiles.filter((f) => f.includes(`${path.sep}sharp-`)).map((f) => f.startsWith(dir + path.sep))).toEqual([true]);
});

it('loads the XXH3 hasher from its linux prebuild inside the artifact, with no other platform shipped', () => {
  const hasher = path.join(dir, 'node_modules', 'xxhash-addon', 'prebuilds', 'linux-x64');
  expect(run.nativeFiles.filter((f) => f.includes('xxhash-addon')).map((f) => path.dirname(f))).toEqual([hasher]);
  expect(readdirSync(path.dirname(hasher))).toEqual(['linux-x64']);
});

it('answers the SQS batch with no failed messages', () => {
  expect(run.response).toEqual({ batchItemFailures: [] });
});

it('carries the HEIF decoder as the package files, byte for byte, and its thread beside the handler', () => {
  for (const file of ['libheif-wasm/libheif.wasm', 'libheif-wasm/libheif.js', 'LICENSE']) {
    const shipped = readFileSync(path.join(dir, 'node_modules', 'libheif-js', file));
    expect([file, shipped.equals(readFileSync(path.join(ROOT, 'node_modules', 'libheif-js', file)))]).toEqual([file, true]);
  }
  expect(readFileSync(path.join(dir, 'functions', 'ingest', 'heif-worker.cjs'), 'utf8')).toBe(
    readFileSync(path.join(ROOT, 'lib', 'ingest', 'heif-worker.cjs'), 'utf8'),
  );
  expect(readFileSync(path.join(dir, 'THIRD-PARTY-NOTICES.txt'), 'utf8')).toContain('GNU Lesser General Public License v3.0');
});

it('records the uploads as classified: the PNG and the HEIC alike, cats both', async () => {
  const out = await ddb.send(
    new QueryCommand({
      TableName: stack.table,
      KeyConditionExpression: 'batch_id = :b AND img_fprint > :summary',
      ExpressionAttributeValues: { ':b': batchPartition('deploy-test', batchId), ':summary': BATCH_SK },
      ConsistentRead: true,
    }),
  );
  const items = (out.Items as ImageItem[])
    .map((i) => [i.file_name, i.op_status, i.rek_iscat])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  expect(items).toEqual([
    ['chelsea.heic', 'success', true],
    ['chelsea.png', 'success', true],
  ]);
});

it('moves the upload out of uploads/ into processed/', async () => {
  const processed = await s3.send(new ListObjectsV2Command({ Bucket: stack.bucket, Prefix: `processed/deploy-test/${batchId}/` }));
  const stillUploaded = await s3.send(new HeadObjectCommand({ Bucket: stack.bucket, Key: uploadKey })).then(
    () => true,
    () => false,
  );
  expect([processed.KeyCount, stillUploaded]).toEqual([2, false]);
});
