// The packaged stack on moto (docs/decisions/0037-artifact-on-moto.md): cfn-lint on the compiled template, the template
// deployed into moto's CloudFormation with what it skips made and what it ignores applied from the template's own
// properties, then every function driven from its zip as Lambda invokes it: an upload through S3's notification, the
// route function, the fair uploads queue and the ingest into records and moved objects; every HTTP route once through
// API Gateway's payload 2.0 events; the sweeps from their schedules, the erasure and the callbacks from their queues.
// Every AWS call a function sent was checked against its role when sent (and refused as AWS refuses it when not
// allowed); the last test lists any refusal.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { registerApiKey } from '../../lib/auth/register';
import { Registrations } from '../../lib/store/client/registrations';
import { ensurePackaged, ROOT } from '../deploy/packaged';
import { cfnLint, KEPT_WARNINGS, type LintFinding } from './cfn-lint';
import { clientConfig } from './deploy';
import { fireSchedule, type HttpApi, httpApi, pollQueue } from './drive';
import { SKIPPED_TYPES } from './fill-in';
import { driveImportTask } from './import-task.drive';
import { resolve } from './intrinsics';
import { FUNCTIONS, type MotoStack, PARAMETERS, startMotoStack } from './moto-stack';
import { readAlarms, readBucket, readCodeHashes, readHttpApi, readPolicies, readSecrets, readSubscriptions, readTable } from './read-back';
import { filled, routeRequests } from './route-requests';

const TEMPLATE = path.join(ROOT, '.serverless', 'cloudformation-template-update-stack.json');
const CLIENT = 'moto-client';
const FIXTURE = readFileSync(path.join(ROOT, 'test', 'fixtures', 'chelsea.png'));

let stack: MotoStack;
let api: HttpApi;
let apiKey: string;
let packagingSeconds = 0;
let lint: Promise<{ version: string; findings: LintFinding[] }>;
const types = () => Object.entries(stack.template.Resources).map(([id, r]) => [id, r.Type] as const);
const props = (id: string) => resolve(stack.template, stack.ctx, stack.template.Resources[id]?.Properties) as Record<string, unknown>;

beforeAll(async () => {
  // cfn-lint runs on the compiled template while the stack deploys.
  const packagingStarted = Date.now();
  await ensurePackaged([...FUNCTIONS]);
  packagingSeconds = (Date.now() - packagingStarted) / 1000;
  lint = cfnLint(TEMPLATE);
  stack = await startMotoStack();
  api = await httpApi(stack);
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig(stack.moto.url)));
  apiKey = await registerApiKey(new Registrations({ ddb, tableName: stack.ctx.physical.ImagesTable as string }), CLIENT);
  ddb.destroy();
}, 240_000);

afterAll(async () => {
  if (stack) {
    // The record, in CI's log: how many calls each function sent, and how many (action, resource) pairs its role allowed.
    const summary = FUNCTIONS.map((fn) => {
      const calls = stack.proxy.calls.filter((c) => c.functionName === fn);
      const pairs = new Set(calls.flatMap((c) => c.authorizations.map((a) => `${a.action} ${a.resource}`)));
      return `${fn}: ${stack.functions[fn].runtime.count} invocations, ${calls.length} AWS calls, ${pairs.size} (action, resource) pairs`;
    });
    const phases = stack.phases.map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`).join(', ');
    process.stdout.write(`test:aws on moto (osls package ${packagingSeconds.toFixed(1)} s; start: ${phases})\n  ${summary.join('\n  ')}\n`);
  }
  await stack?.stop();
});

describe('the compiled template', () => {
  it('passes cfn-lint with no error, and only the warnings kept with their reason', async () => {
    const { findings } = await lint;
    const unexplained = findings.filter((f) => f.Level === 'Error' || !(f.Rule.Id in KEPT_WARNINGS));
    expect(unexplained.map((f) => `${f.Rule.Id} ${f.Message} at ${f.Location.Path.join('/')}`)).toEqual([]);
  });

  it('deploys: every resource is moto’s or made by the test, only of the types moto is known to skip', () => {
    expect(stack.deployed.status).toBe('UPDATE_COMPLETE');
    const conditional = (id: string) => (stack.template.Resources[id] as { Condition?: string }).Condition !== undefined;
    const absent = types().filter(([id]) => !(id in stack.deployed.physical) && !stack.made.includes(id) && !conditional(id));
    expect(absent).toEqual([]);
    expect([...new Set(stack.made.map((id) => stack.template.Resources[id]?.Type))].sort()).toEqual([...SKIPPED_TYPES].sort());
  });

  it('runs on moto the very zips osls packaged (the ingest its twin for this machine, the same JavaScript)', async () => {
    const { deployed, packaged } = await readCodeHashes(stack);
    expect([deployed, stack.twinIsDeployedCode]).toEqual([packaged, true]);
  });
});

describe('what moto’s CloudFormation skips, made from the template', () => {
  it('the HTTP API: its routes, its two integrations, its $default stage with the throttling', async () => {
    const read = await readHttpApi(stack);
    const routeKeys = types()
      .filter(([, t]) => t === 'AWS::ApiGatewayV2::Route')
      .map(([id]) => props(id).RouteKey as string);
    expect(read.routeKeys).toEqual(routeKeys.sort());
    expect(read.integrations).toEqual(
      ['ApiLambdaFunction', 'BatchesLambdaFunction']
        .map((f) => ['AWS_PROXY', `arn:aws:lambda:us-east-1:123456789012:function:${stack.ctx.physical[f]}`, '2.0', 30000])
        .sort(),
    );
    expect(read.stages).toEqual([['$default', true, 1000, 2000]]);
  });

  it('the alarms, the alarm e-mail subscription and the secrets', async () => {
    const alarms = types()
      .filter(([, t]) => t === 'AWS::CloudWatch::Alarm')
      .map(([id]) => props(id).AlarmName as string);
    expect(await readAlarms(stack)).toEqual(alarms.sort());
    expect(await readSubscriptions(stack)).toEqual([['email', 'ops@example.com']]);
    expect(await readSecrets(stack)).toEqual([props('CursorSecret').Name, props('CallbackSigningKey').Name]);
  });

  it('the bucket policy (then taken off moto, which evaluates it without its conditions) and the upload events queue’s policy', async () => {
    const read = { ...(await readPolicies(stack)), bucketPolicy: stack.bucketPolicyAsMade };
    expect(read.bucketPolicy).toEqual(props('ImagesBucketPolicy').PolicyDocument);
    expect(read.queuePolicy).toEqual(props('UploadEventsQueuePolicy').PolicyDocument);
  });

  it('every function’s environment, with {{resolve:secretsmanager:…}} resolved (moto left it as written)', () => {
    const unresolved = Object.entries(stack.deployedVariables).flatMap(([fn, vars]) =>
      Object.entries(vars)
        .filter(([, v]) => v.includes('{{resolve:'))
        .map(([k]) => `${fn}.${k}`),
    );
    expect(unresolved.sort()).toEqual(['api.CURSOR_SECRET', 'batches.CALLBACK_SIGNING_KEY', 'callbacks.CALLBACK_SIGNING_KEY']);
    for (const fn of FUNCTIONS)
      for (const v of Object.values(stack.functions[fn].config.variables)) expect(v).not.toMatch(/\{\{resolve:|\$\{/);
    expect(stack.functions.api.config.variables.CURSOR_SECRET).toMatch(/^[A-Za-z0-9]{64}$/);
  });
});

describe('what moto’s CloudFormation ignores, applied from the template', () => {
  it('the bucket’s notification, lifecycle, CORS, public access block and ownership', async () => {
    const p = props('ImagesBucket') as Record<string, { [k: string]: unknown }>;
    const read = await readBucket(stack);
    const queueArn = `arn:aws:sqs:us-east-1:123456789012:${(stack.ctx.physical.UploadEventsQueue as string).split('/').pop() as string}`;
    expect(read.notification).toEqual([[['s3:ObjectCreated:*'], queueArn, [['prefix', 'uploads/']]]]);
    const rules = p.LifecycleConfiguration?.Rules as {
      Id: string;
      ExpirationInDays: number;
      Prefix: string;
      AbortIncompleteMultipartUpload?: { DaysAfterInitiation: number };
    }[];
    expect(read.lifecycle).toEqual(
      rules.map((r) => [r.Id, 'Enabled', r.Prefix, r.ExpirationInDays, r.AbortIncompleteMultipartUpload?.DaysAfterInitiation]),
    );
    expect(read.cors).toEqual([
      [['POST'], ['*'], 3600],
      [['GET'], [`https://${stack.ctx.physical.HttpApi as string}.execute-api.us-east-1.amazonaws.com`], 3600],
    ]);
    expect(read.publicAccessBlock).toEqual(p.PublicAccessBlockConfiguration);
    expect(read.ownership).toEqual(['BucketOwnerEnforced']);
  });

  it('the table’s TTL and point-in-time recovery', async () => {
    const p = props('ImagesTable') as { TimeToLiveSpecification: { AttributeName: string }; PointInTimeRecoverySpecification: unknown };
    expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(await readTable(stack)).toEqual({ ttl: [p.TimeToLiveSpecification.AttributeName, 'ENABLED'], pitr: 'ENABLED' });
  });
});

const auth = () => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' });
let batchId: string;
let fprint: string;
const send = (method: string, p: string, body?: unknown) =>
  api.send({ method, path: p, headers: auth(), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe('an upload, from S3 through the route function and the fair uploads queue to the ingest', () => {
  it('POST /v1/batches opens a batch with a form for its file; POST …/uploads renews the form', async () => {
    const files = [{ name: 'chelsea.png', contentType: 'image/png', size: FIXTURE.length }];
    const created = await send('POST', '/v1/batches', { files, callbackUrl: 'https://hooks.example.com/icecat' });
    expect([created.routeKey, created.status]).toEqual(['POST /v1/batches', 201]);
    batchId = (created.json as { batchId: string }).batchId;
    const renewed = await send('POST', `/v1/batches/${batchId}/uploads`, { files, renew: true });
    expect([renewed.routeKey, renewed.status]).toEqual(['POST /v1/batches/{batchId}/uploads', 200]);
  });

  it('S3 notifies the upload events queue; the route function sends it on in its client’s message group', async () => {
    await stack.s3.send(
      new PutObjectCommand({
        Bucket: stack.ctx.physical.ImagesBucket,
        Key: `uploads/${CLIENT}/${batchId}/chelsea.png`,
        Body: FIXTURE,
        ContentType: 'image/png',
      }),
    );
    const routed = await pollQueue(stack, 'route');
    // S3's test event when the notification was set, then the upload's.
    const errors = routed.invocations
      .filter((i) => !i.ok)
      .map((i) => `${i.error?.errorMessage}\n${stack.functions.route.runtime.logTail().slice(-3000)}`);
    expect([routed.messages, routed.failed, errors]).toEqual([2, 0, []]);
    const peek = new SQSClient(clientConfig(stack.moto.url));
    const queued = await peek.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.ctx.physical.IngestQueue,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['MessageGroupId'],
        VisibilityTimeout: 0,
      }),
    );
    peek.destroy();
    expect((queued.Messages ?? []).map((m) => m.Attributes?.MessageGroupId).sort()).toContain(CLIENT);
  });

  it('the ingest classifies it: no failed message, a success record, the object moved to processed/', async () => {
    const ingested = await pollQueue(stack, 'ingest');
    expect(ingested.invocations.map((i) => (i.ok ? i.response : i.error))).toEqual(
      ingested.invocations.map(() => ({ batchItemFailures: [] })),
    );
    const images = await send('GET', `/v1/batches/${batchId}/images`);
    const items = (images.json as { items: { fileName: string; status: string; fprint: string }[] }).items;
    expect(items.map((i) => [i.fileName, i.status])).toEqual([['chelsea.png', 'success']]);
    fprint = items[0]?.fprint as string;
    const list = async (prefix: string) =>
      (
        await stack.s3.send(
          new ListObjectsV2Command({ Bucket: stack.ctx.physical.ImagesBucket, Prefix: `${prefix}/${CLIENT}/${batchId}/` }),
        )
      ).KeyCount;
    expect([await list('uploads'), await list('processed')]).toEqual([0, 1]);
  });
});

describe('every route of the template once, through API Gateway’s payload 2.0 events', () => {
  const vars: Record<string, string> = {};
  for (const r of routeRequests()) {
    it(`${r.method} ${r.path} → ${r.route} answers ${r.status}`, async () => {
      Object.assign(vars, { batchId, fprint });
      const request = filled(r, vars);
      const answer = await api.send({
        method: request.method,
        path: request.path,
        headers: request.anonymous ? {} : auth(),
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      });
      if (r.route === 'GET /') vars.asset = /\/app\/([^"'?]+)/.exec(answer.body)?.[1] ?? 'missing';
      // An unexpected answer shows its body, and the function's log when it failed.
      const shown =
        answer.status === r.status
          ? ''
          : `${answer.body}\n${answer.status >= 500 ? stack.functions[answer.functionName].runtime.logTail().slice(-3000) : ''}`;
      expect([answer.routeKey, answer.status, shown]).toEqual([r.route, r.status, '']);
    });
  }

  it('matched every route of the template', () => {
    expect([...api.exercised].sort()).toEqual([...api.routeKeys].sort());
  });
});

describe('the sweeps from their schedules, the erasure and the callbacks from their queues', () => {
  it('callbacks: the batch’s completion callback attempt runs (the hook is unreachable: its retry is queued)', async () => {
    const polled = await pollQueue(stack, 'callbacks', 1);
    expect([polled.messages >= 1, polled.invocations.map((i) => i.ok)]).toEqual([true, [true]]);
  });

  it('reconcile and expire run on their schedules', async () => {
    const runs = [await fireSchedule(stack, 'reconcile'), await fireSchedule(stack, 'expire')];
    expect(runs.map((r) => (r.ok ? 'ok' : r.error))).toEqual(['ok', 'ok']);
  });

  it('erase takes the deleted batch’s objects and records away', async () => {
    const erased = await pollQueue(stack, 'erase');
    expect([erased.messages, erased.failed]).toEqual([1, 0]);
    const left = await stack.s3.send(
      new ListObjectsV2Command({ Bucket: stack.ctx.physical.ImagesBucket, Prefix: `processed/${CLIENT}/${batchId}/` }),
    );
    expect([left.KeyCount, (await send('GET', `/v1/batches/${batchId}`)).status]).toEqual([0, 404]);
  });
});

// moto (5.2.1) has no S3 Batch Operations jobs (its S3 Control answers CreateJob and DescribeJob 404), so the job is
// not there to invoke the task: the task's zip is invoked with the events the job sends (AWS's documented schema 2.0
// event, events/), against the deployed queue and table, with its role checked on every call.
describe('an import’s S3 Batch Operations task, invoked as the job invokes it', () => {
  it('sends an in-source image once to the uploads queue, skips a non-image, refuses an object outside the source, and counts the import’s progress once', async () => {
    const checked = await driveImportTask({
      invoke: async (event) => {
        const run = await stack.functions.importTask.runtime.invoke(event);
        if (!run.ok) throw new Error(`${run.error?.errorMessage}\n${stack.functions.importTask.runtime.logTail().slice(-3000)}`);
        return run.response;
      },
      queueUrl: stack.ctx.physical.IngestQueue as string,
      sqsEndpoint: stack.moto.url,
      dynamodbEndpoint: stack.moto.url,
      tableName: stack.ctx.physical.ImagesTable as string,
      bucket: PARAMETERS.ImportSourceBuckets,
    });
    expect(checked).toHaveLength(5);
  });
});

describe('the roles', () => {
  it('every function ran', () => {
    expect(FUNCTIONS.filter((fn) => stack.functions[fn].runtime.count === 0)).toEqual([]);
  });

  it('allow every AWS call each function sent (checked by an IAM policy evaluator; moto enforces none)', () => {
    const denied = stack.proxy.calls.flatMap((c) => c.denied.map((d) => `${c.functionName}: ${d.action} on ${d.resource} (${d.result})`));
    expect([...new Set(denied)]).toEqual([]);
    const distinct = new Set(stack.proxy.calls.flatMap((c) => c.authorizations.map((a) => `${c.functionName} ${a.action} ${a.resource}`)));
    expect(distinct.size).toBeGreaterThan(20);
  });
});
