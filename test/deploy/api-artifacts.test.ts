// The API artifacts are complete and behave as the sources do: each zip, unzipped alone into an empty folder and
// run with plain `node` (no project node_modules within reach), answers API Gateway v2 events built from the real
// sample in events/ (re-aimed by the template's routes, as API Gateway builds them) against a private local stack,
// errors included (their mapping must survive minification).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { apiGetBatchImagesEvent } from '../../events';
import { registerApiKey } from '../../lib/auth/register';
import { Registrations } from '../../lib/store/client/registrations';
import { buildHttpApiEvent, matchRoute, routesFromTemplate } from '../../local/gateway/routes';
import type { Stack } from '../../local/stack/types';
import { extractZip } from '../../scripts/zip';
import { startTestStack, uniqueId } from '../helpers';
import { batchItem, imageItem } from '../helpers/api';
import { DEPLOYED_WIRING, ensurePackaged, runUnzippedHandler } from './packaged';

const dirs: Record<string, string> = {};
let stack: Stack;
let key: string;
let ddb: DynamoDBDocumentClient;
const clientId = uniqueId('artifact-api');

const routes = routesFromTemplate(readFileSync(path.join(__dirname, '..', '..', 'serverless.yml'), 'utf8'));

/** The event API Gateway builds for this request on the template's route, with the sample's headers and this test's key. */
function request(method: string, rawPath: string, body?: unknown): APIGatewayProxyEventV2 {
  const sample = apiGetBatchImagesEvent();
  const headers = { ...sample.headers, authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const match = matchRoute(routes, method, rawPath);
  if (!match) throw new Error(`no route of the template for ${method} ${rawPath}`);
  return buildHttpApiEvent(
    {
      method,
      url: rawPath,
      rawHeaders: Object.entries(headers).flat(),
      body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
      sourceIp: sample.requestContext.http.sourceIp,
      host: sample.headers.host ?? sample.requestContext.domainName,
    },
    match,
    sample.requestContext,
  );
}

async function invoke(fn: 'api' | 'batches', event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const run = await runUnzippedHandler<APIGatewayProxyStructuredResultV2>(dirs[fn]!, `./functions/${fn}/handler.js`, event, {
    ...stack.env,
    ...DEPLOYED_WIRING,
  });
  return run.response;
}

const json = (res: APIGatewayProxyStructuredResultV2) => JSON.parse(String(res.body)) as Record<string, unknown>;

beforeAll(async () => {
  const packaged = await ensurePackaged();
  for (const fn of ['api', 'batches']) {
    dirs[fn] = mkdtempSync(path.join(tmpdir(), `icecat-${fn}-`));
    await extractZip(packaged.artifact(fn), dirs[fn]);
  }
  stack = await startTestStack({ ingestHandler: async () => ({ batchItemFailures: [] }) });
  ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: stack.endpoints.dynamodb,
      region: stack.env.AWS_REGION,
      credentials: { accessKeyId: stack.env.AWS_ACCESS_KEY_ID!, secretAccessKey: stack.env.AWS_SECRET_ACCESS_KEY! },
    }),
  );
  key = await registerApiKey(new Registrations({ ddb, tableName: stack.table }), clientId);
}, 300_000);

afterAll(async () => {
  ddb?.destroy();
  await stack?.stop();
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
});

it('creates a batch with presigned upload forms (batches artifact), then reads its summary (api artifact)', async () => {
  const created = await invoke(
    'batches',
    request('POST', '/v1/batches', { files: [{ name: 'cat.jpg', contentType: 'image/jpeg', size: 1000 }] }),
  );
  const batchId = json(created).batchId as string;

  const summary = await invoke('api', request('GET', `/v1/batches/${batchId}`));

  expect(created.statusCode).toBe(201);
  expect((json(created).uploads as { fields: Record<string, string> }[])[0]!.fields.key).toBe(`uploads/${clientId}/${batchId}/cat.jpg`);
  expect([summary.statusCode, json(summary).status]).toEqual([200, 'open']);
});

it('answers an image with its thumbnail and image URLs, presigned for the S3 endpoint (api artifact)', async () => {
  const batchId = uniqueId('b');
  await ddb.send(new PutCommand({ TableName: stack.table, Item: batchItem(clientId, batchId) }));
  await ddb.send(
    new PutCommand({ TableName: stack.table, Item: imageItem(clientId, batchId, { fprint: 'f1', uploadTs: Date.now(), isCat: true }) }),
  );

  const res = await invoke('api', request('GET', `/v1/batches/${batchId}/images/f1`));

  const objects = `${stack.env.AWS_ENDPOINT_URL_S3}/${stack.bucket}`;
  expect(res.statusCode).toBe(200);
  expect(json(res)).toMatchObject({
    thumbnailUrl: expect.stringMatching(
      new RegExp(`^${objects}/thumbnails/${clientId}/${batchId}/f1\\.webp\\?.*X-Amz-Signature=[0-9a-f]{64}`),
    ),
    imageUrl: expect.stringMatching(new RegExp(`^${objects}/processed/${clientId}/${batchId}/f1\\.jpg\\?.*X-Amz-Expires=1200`)),
  });
});

it('maps a missing batch to a 404 in the API error shape', async () => {
  const res = await invoke('api', request('GET', '/v1/batches/no-such-batch'));

  expect(res.statusCode).toBe(404);
  expect(json(res)).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
});

it('closes a batch by its custom method on the route that deploys it: batchId "<id>:close" (batches artifact)', async () => {
  const created = await invoke(
    'batches',
    request('POST', '/v1/batches', { files: [{ name: 'a.jpg', contentType: 'image/jpeg', size: 10 }] }),
  );
  const batchId = json(created).batchId as string;
  const event = request('POST', `/v1/batches/${batchId}:close`, {});

  const res = await invoke('batches', event);

  expect([event.routeKey, event.pathParameters, res.statusCode, json(res).batchId]).toEqual([
    'POST /v1/batches/{batchId}',
    { batchId: `${batchId}:close` },
    200,
    batchId,
  ]);
});

it('maps an invalid body to a 400 naming the field', async () => {
  const res = await invoke('batches', request('POST', '/v1/batches', { retentionDays: 'forever' }));

  expect(res.statusCode).toBe(400);
  expect((json(res).error as { message: string }).message).toContain('retentionDays');
});

it('maps an unknown key to a 401', async () => {
  const event = request('GET', '/v1/images');

  const res = await invoke('api', { ...event, headers: { ...event.headers, authorization: 'Bearer icw_not_a_real_key_0000000000' } });

  expect(res.statusCode).toBe(401);
  expect(json(res)).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
});

it('serves the web app embedded in the api artifact: the page under its CSP, and the script the page names', async () => {
  const get = (rawPath: string) => {
    const event = request('GET', rawPath);
    return invoke('api', { ...event, headers: { 'accept-encoding': 'gzip' } });
  };
  const page = await get('/');
  const html = gunzipSync(Buffer.from(String(page.body), 'base64')).toString('utf8');
  const script = /src="\/app\/([^"]+\.js)"/.exec(html)?.[1] as string;

  const js = await get(`/app/${script}`);

  expect([page.statusCode, page.headers?.['Content-Type'], page.headers?.['Content-Encoding']]).toEqual([
    200,
    'text/html; charset=utf-8',
    'gzip',
  ]);
  expect(page.headers?.['Content-Security-Policy']).toContain("script-src 'self'");
  expect([js.statusCode, js.headers?.['Content-Type']]).toEqual([200, 'text/javascript; charset=utf-8']);
  expect(gunzipSync(Buffer.from(String(js.body), 'base64')).length).toBeGreaterThan(1000);
});
