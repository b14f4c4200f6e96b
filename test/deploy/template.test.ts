// The compiled CloudFormation template (`osls package`, offline) against what the code assumes: the indexes it
// queries, the AWS calls each function's bundle makes, the event source, queue, bucket and HTTP routes.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_FUNCTIONS, type ApiFunctionName, apiHandlerModule, DEFAULT_API_FUNCTION } from '../../lib/api/functions';
import { routeTargets } from '../../lib/api/routes';
import { auditEntriesRequest } from '../../lib/store/audit/queue';
import {
  batchByStatusRequest,
  batchCapturedRequest,
  batchLogsRequest,
  batchResultsRequest,
  batchTimeRangeRequest,
  LISTING_ATTRIBUTES,
} from '../../lib/store/batch/images';
import { dueCallbacksQuery } from '../../lib/store/callback/requeue';
import {
  clientBatchesRequest,
  clientByStatusRequest,
  clientCatsRequest,
  clientTimeRangeRequest,
  imageAcrossBatchesRequest,
} from '../../lib/store/client/images';
import { expiredBatchesQuery } from '../../lib/store/expiry/expired';
import { runningRedetectionsQuery } from '../../lib/store/redetect/running';
import { reviewedRequest, reviewQueueSideRequest } from '../../lib/store/review/queue';
import type { QueryPlan } from '../../lib/store/table/expressions';
import { INDEX } from '../../lib/store/table/schema';
import { rolesFromTemplate } from '../../local/iam/roles';
import { roleTemplateFromSources } from '../../local/iam/template';
import { type CfnResource, ensurePackaged, type Packaged, ROOT } from './packaged';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { rules } = require('../../scripts/sizing.cjs') as {
  rules: { maximumConcurrency(tps: number, seconds: number, inFlight: number): number };
};

// ---- reading the template -------------------------------------------------------------------------------------

/** An intrinsic rendered readable: Ref X → {X}, GetAtt X.Arn → {X.Arn}, Sub → its string with ${X.Arn} → {X.Arn}. */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') return `{${v.Ref}}`;
  if (Array.isArray(v['Fn::GetAtt'])) return `{${(v['Fn::GetAtt'] as string[]).join('.')}}`;
  if (typeof v['Fn::Sub'] === 'string') {
    return (v['Fn::Sub'] as string).replace(/\$\{(?!AWS::)([A-Za-z0-9]+(?:\.[A-Za-z]+)?)\}/g, '{$1}');
  }
  // The imports' source buckets: Fn::Split [',', Fn::Sub [template, {Buckets, Objects}]] → {Split:template}.
  if (Array.isArray(v['Fn::Sub'])) return render({ 'Fn::Sub': (v['Fn::Sub'] as unknown[])[0] });
  if (Array.isArray(v['Fn::Split'])) return `{Split:${render((v['Fn::Split'] as unknown[])[1])}}`;
  return JSON.stringify(value);
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string[];
  Resource: string[];
}

/** A statement under Fn::If [condition, statement, AWS::NoValue] (the imports' source buckets): what it grants when it holds. */
const unlessConditional = (s: Record<string, unknown>): Record<string, unknown>[] => {
  const branches = s['Fn::If'] as [string, Record<string, unknown>, unknown] | undefined;
  return branches ? [branches[1]] : [s];
};

function roleStatements(role: CfnResource): Statement[] {
  const policies = (role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Record<string, unknown>[] } }[];
  return policies.flatMap((p) =>
    p.PolicyDocument.Statement.flatMap(unlessConditional).map((s) => ({
      Sid: s.Sid as string | undefined,
      Effect: s.Effect as string,
      Action: list(s.Action as string | string[]),
      Resource: list(s.Resource as unknown).map(render),
    })),
  );
}

const FUNCTIONS = {
  ingest: 'IngestLambdaFunction',
  api: 'ApiLambdaFunction',
  batches: 'BatchesLambdaFunction',
  reconcile: 'ReconcileLambdaFunction',
  route: 'RouteLambdaFunction',
  erase: 'EraseLambdaFunction',
  callbacks: 'CallbacksLambdaFunction',
  expire: 'ExpireLambdaFunction',
  importTask: 'ImportTaskLambdaFunction',
} as const;
type FunctionName = keyof typeof FUNCTIONS;
const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];

// ---- what the code assumes --------------------------------------------------------------------------------------

const Q = { tableName: 'T', batchId: 'b', clientId: 'c', nowS: 1, from: 1, to: 2 };
/** Every Query the store sends, with every optional filter set so each attribute it may name appears. */
const QUERY_PLANS: QueryPlan[] = [
  batchResultsRequest(Q),
  batchByStatusRequest({ ...Q, status: 'success' }),
  batchTimeRangeRequest(Q),
  batchLogsRequest(Q),
  clientByStatusRequest({ ...Q, status: 'success', cat: true }),
  imageAcrossBatchesRequest({ ...Q, fprint: 'f', status: 'success', cat: true }),
  clientTimeRangeRequest({ ...Q, status: 'success', cat: false }),
  clientCatsRequest({ ...Q, status: 'success' }),
  clientBatchesRequest({ ...Q, status: 'processing' }),
  batchCapturedRequest({ ...Q, capturedFrom: '2024-06-01T00:00:00', capturedTo: '2024-06-01T23:59:59' }),
  // The reconciliation sweep's: batches owing their completion callback (it reads each summary itself).
  {
    pattern: 'callbacks owed',
    scope: 'all batches',
    keyAttributes: ['cb_due', 'done_ts', 'batch_id', 'img_fprint'],
    input: dueCallbacksQuery('T', 1, 100),
  },
  // The expiry sweep's: batches past their expiry (it marks each summary itself).
  {
    pattern: 'batches expired',
    scope: 'all batches',
    keyAttributes: ['exp_due', 'ttl', 'batch_id', 'img_fprint'],
    input: expiredBatchesQuery('T', 1, 100),
  },
  // The reconcile sweep's: batches running a re-detection (it reads each summary itself).
  {
    pattern: 'redetection runs',
    scope: 'all batches',
    keyAttributes: ['rd_live', 'batch_id', 'img_fprint'],
    input: runningRedetectionsQuery('T', 100),
  },
  // The review queue (keys only: its page is then read by BatchGetItem) and the reviewed images' verdicts.
  ...(['up', 'down'] as const).map((side) => ({
    pattern: `review queue ${side}`,
    scope: 'a batch',
    keyAttributes: ['batch_id', 'review_key', 'img_fprint'],
    input: reviewQueueSideRequest('T', 'c', 'b', 80, side, 10)!,
  })),
  {
    pattern: 'reviewed verdicts',
    scope: 'a batch',
    keyAttributes: ['batch_id', 'review_key', 'img_fprint'],
    input: reviewedRequest('T', 'c', 'b'),
  },
  // The audit sample (keys only: the queue's page is then read by BatchGetItem; the estimate reads the keys alone).
  ...([true, false] as const).map((pendingOnly) => ({
    pattern: pendingOnly ? 'audit queue' : 'audit entries',
    scope: 'a batch',
    keyAttributes: ['batch_id', 'audit_key', 'img_fprint'],
    input: auditEntriesRequest('T', 'c', 'b', pendingOnly),
  })),
];
/** What an index keyed by status_ts (`{op_status}#{upload_ts}`) holds without projecting it (lib/store/table/attributes.ts). */
const HELD_BY_KEY: Record<string, string[]> = { status_ts: ['op_status', 'upload_ts'] };
/** Indexes whose queries list no image attributes: their pages are keys, read again from the table when needed. */
const KEYS_INDEXES: string[] = [
  INDEX.batchLogs,
  INDEX.clientBatches,
  INDEX.callbacksDue,
  INDEX.batchesExpiring,
  INDEX.batchReview,
  INDEX.batchCaptured,
  INDEX.batchAudit,
  INDEX.redetectRuns,
];
const INDEX_PLANS = QUERY_PLANS.filter((p) => p.input.IndexName);

/** Attribute names an expression mentions, in order, through its #placeholders. */
function attributesIn(expression: string | undefined, names: Record<string, string> | undefined): string[] {
  const found = (expression ?? '').match(/#[A-Za-z0-9_]+/g) ?? [];
  return [...new Set(found.map((p) => names?.[p] ?? p))];
}

/** The SDK commands (and presigned POST) a function's own source files in its bundle send, as IAM actions. */
const COMMAND_ACTIONS: Record<string, string[]> = {
  GetCommand: ['dynamodb:GetItem'],
  GetItemCommand: ['dynamodb:GetItem'],
  PutCommand: ['dynamodb:PutItem'],
  PutItemCommand: ['dynamodb:PutItem'],
  UpdateCommand: ['dynamodb:UpdateItem'],
  UpdateItemCommand: ['dynamodb:UpdateItem'],
  // IAM authorizes each write of a transaction as its own action; the store's transactions hold puts and updates.
  TransactWriteCommand: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
  DeleteCommand: ['dynamodb:DeleteItem'],
  QueryCommand: ['dynamodb:Query'],
  BatchGetCommand: ['dynamodb:BatchGetItem'],
  BatchWriteCommand: ['dynamodb:BatchWriteItem'],
  GetObjectCommand: ['s3:GetObject'],
  HeadObjectCommand: ['s3:GetObject'],
  PutObjectCommand: ['s3:PutObject'],
  CopyObjectCommand: ['s3:GetObject', 's3:PutObject'],
  DeleteObjectCommand: ['s3:DeleteObject'],
  ListObjectsV2Command: ['s3:ListBucket'],
  SendMessageCommand: ['sqs:SendMessage'],
  SendMessageBatchCommand: ['sqs:SendMessage'],
  ChangeMessageVisibilityBatchCommand: ['sqs:ChangeMessageVisibility'],
  DetectLabelsCommand: ['rekognition:DetectLabels'],
  // An import's S3 Batch Operations job (lib/import/batch-operations.ts).
  CreateJobCommand: ['s3:CreateJob'],
  DescribeJobCommand: ['s3:DescribeJob'],
  DeleteObjectsCommand: ['s3:DeleteObject'],
  PutEventsCommand: ['events:PutEvents'],
  createPresignedPost: ['s3:PutObject'],
  // The read function presigns GETs of images with the SDK's S3 presigner alone (lib/api/image-links.ts).
  S3RequestPresigner: ['s3:GetObject'],
  // lib-storage's multipart upload: PutObject covers its Create/UploadPart/Complete calls; a failure aborts.
  Upload: ['s3:PutObject', 's3:AbortMultipartUpload'],
};

/** What Lambda itself needs beyond the code's calls. */
const PLATFORM_ACTIONS: Record<keyof typeof FUNCTIONS, string[]> = {
  // Logging; the SQS event source polls with the function's role; ListBucket makes a missing object a 404.
  ingest: [
    'logs:CreateLogStream',
    'logs:PutLogEvents',
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:GetQueueAttributes',
    's3:ListBucket',
    // An imported object is read as the version listed: GetObject with a VersionId is authorised as GetObjectVersion.
    's3:GetObjectVersion',
  ],
  api: ['logs:CreateLogStream', 'logs:PutLogEvents'],
  // CreateJob passes the import job role to S3 Batch Operations.
  batches: ['logs:CreateLogStream', 'logs:PutLogEvents', 'iam:PassRole'],
  // A job started again after the quota's reset passes the import job role (lib/reconcile/import-jobs.ts).
  reconcile: ['logs:CreateLogStream', 'logs:PutLogEvents', 'iam:PassRole'],
  route: ['logs:CreateLogStream', 'logs:PutLogEvents', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
  erase: ['logs:CreateLogStream', 'logs:PutLogEvents', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
  callbacks: ['logs:CreateLogStream', 'logs:PutLogEvents', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
  expire: ['logs:CreateLogStream', 'logs:PutLogEvents'],
  importTask: ['logs:CreateLogStream', 'logs:PutLogEvents'],
};

/** The package and project files that put code into a function's bundle (not those esbuild read and shook out). */
const bundledInputs = (pkg: Packaged, fn: FunctionName): string[] =>
  Object.values(pkg.metafile(fn).outputs).flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([file]) => file),
  );

function actionsSentBy(pkg: Packaged, fn: FunctionName): { actions: Set<string>; unknown: string[] } {
  const sources = bundledInputs(pkg, fn).filter((f) => !f.includes('node_modules/'));
  const actions = new Set<string>();
  const unknown: string[] = [];
  for (const file of sources) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const calls = [...text.matchAll(/new\s+([A-Z][A-Za-z0-9]*Command)\s*\(/g)].map((m) => m[1] as string);
    if (/\bcreatePresignedPost\s*\(/.test(text)) calls.push('createPresignedPost');
    if (/\bnew\s+S3RequestPresigner\s*\(/.test(text)) calls.push('S3RequestPresigner');
    if (/\bnew\s+Upload\s*\(/.test(text)) calls.push('Upload');
    for (const call of calls) {
      const mapped = COMMAND_ACTIONS[call];
      if (mapped) mapped.forEach((a) => actions.add(a));
      else unknown.push(`${call} in ${file}`);
    }
  }
  return { actions, unknown };
}

// -----------------------------------------------------------------------------------------------------------------

let pkg: Packaged;
let resources: Record<string, CfnResource>;
const resourcesOfType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const props = (logicalId: string) => {
  const r = resources[logicalId];
  if (!r) throw new Error(`template has no resource ${logicalId}`);
  return r.Properties;
};

beforeAll(async () => {
  pkg = await ensurePackaged(FUNCTION_NAMES);
  resources = pkg.template.Resources;
}, 300_000);

describe('table and indexes', () => {
  type KeyElement = { AttributeName: string; KeyType: 'HASH' | 'RANGE' };
  type IndexDef = { IndexName: string; KeySchema: KeyElement[]; Projection: { ProjectionType: string; NonKeyAttributes?: string[] } };
  const table = () => props('ImagesTable');
  const indexes = (): Map<string, IndexDef> =>
    new Map(
      [...((table().LocalSecondaryIndexes ?? []) as IndexDef[]), ...((table().GlobalSecondaryIndexes ?? []) as IndexDef[])].map((i) => [
        i.IndexName,
        i,
      ]),
    );
  const keyOf = (schema: KeyElement[]) => [
    schema.find((k) => k.KeyType === 'HASH')?.AttributeName,
    ...schema.filter((k) => k.KeyType === 'RANGE').map((k) => k.AttributeName),
  ];

  it('defines every index named in the schema module', () => {
    expect([...indexes().keys()].sort()).toEqual(Object.values(INDEX).sort());
  });

  it('has every index queried by some store query', () => {
    expect(new Set(INDEX_PLANS.map((p) => p.input.IndexName))).toEqual(new Set(Object.values(INDEX)));
  });

  it.each(INDEX_PLANS.map((p) => [p.pattern, p] as const))('gives %s the key its key condition uses', (_, plan) => {
    const index = indexes().get(plan.input.IndexName as string);
    const used = attributesIn(plan.input.KeyConditionExpression, plan.input.ExpressionAttributeNames);
    expect(index && keyOf(index.KeySchema).slice(0, used.length)).toEqual(used);
  });

  it.each(INDEX_PLANS.map((p) => [p.pattern, p] as const))('makes %s cursors from exactly its index and table keys', (_, plan) => {
    const index = indexes().get(plan.input.IndexName as string) as IndexDef;
    const expected = new Set([...keyOf(index.KeySchema), ...keyOf(table().KeySchema as KeyElement[])]);
    expect(new Set(plan.keyAttributes)).toEqual(expected);
  });

  it.each(INDEX_PLANS.map((p) => [p.pattern, p] as const))('projects into %s every attribute its query filters on or lists', (_, plan) => {
    const index = indexes().get(plan.input.IndexName as string) as IndexDef;
    const available = new Set([
      ...keyOf(index.KeySchema),
      ...keyOf(index.KeySchema).flatMap((k) => HELD_BY_KEY[k ?? ''] ?? []),
      ...keyOf(table().KeySchema as KeyElement[]),
      ...(index.Projection.NonKeyAttributes ?? []),
    ]);
    const needed = [
      ...attributesIn(plan.input.FilterExpression, plan.input.ExpressionAttributeNames),
      ...attributesIn(plan.input.ProjectionExpression, plan.input.ExpressionAttributeNames),
      // The logs, batches and review listings show no image listing attributes.
      ...(KEYS_INDEXES.includes(plan.input.IndexName as string) ? [] : LISTING_ATTRIBUTES),
    ];
    const missing = index.Projection.ProjectionType === 'ALL' ? [] : needed.filter((a) => !available.has(a));
    expect(missing).toEqual([]);
  });

  it('projects at most 100 attributes summed over its indexes, as CreateTable on AWS allows', () => {
    // An attribute projected into two indexes counts twice (the DynamoDB quota "projected secondary index attributes").
    const projected = [...indexes().values()].reduce((n, i) => n + (i.Projection.NonKeyAttributes?.length ?? 0), 0);
    expect(projected).toBeLessThanOrEqual(100);
  });

  it('projects received_ts only where a claimed image is found, so listings read uploadedAt from upload_ts', () => {
    const withReceived = [...indexes().values()].filter((i) => i.Projection.NonKeyAttributes?.includes('received_ts'));
    expect(withReceived.map((i) => i.IndexName)).toEqual([INDEX.clientFprint]);
  });

  it('is billed on demand', () => {
    expect(table().BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('lets DynamoDB delete items only on purge_at, a week after their expiry (ttl), so the expiry sweep erases each batch first', () => {
    expect(table().TimeToLiveSpecification).toEqual({ AttributeName: 'purge_at', Enabled: true });
  });

  it('keeps point-in-time recovery on', () => {
    expect(table().PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });
});

/** The import source buckets' ARNs (resources/imports.yml), as render() shows them: buckets and their objects. */
const IMPORT_SOURCES = '{Split:arn:aws:s3:::{Buckets},arn:aws:s3:::{Objects}/*}';
const IMPORT_MANIFESTS = '{Split:arn:aws:s3:::{Objects}/*}';

describe('IAM', () => {
  const roleOf = (fn: FunctionName) => render(props(FUNCTIONS[fn]).Role).replace(/^\{(.+)\.Arn\}$/, '$1');
  const statementsOf = (fn: FunctionName) => roleStatements(resources[roleOf(fn)] as CfnResource);
  const allStatements = () => resourcesOfType('AWS::IAM::Role').flatMap(([, r]) => roleStatements(r));

  it('states every role as the local stack reads it from serverless.yml and resources/ (local/iam/template.ts)', () => {
    const place = { region: 'eu-west-1', accountId: '123456789012' };
    expect(rolesFromTemplate(roleTemplateFromSources(ROOT), place)).toEqual(rolesFromTemplate(pkg.template, place));
  });

  it('gives each function a role of its own', () => {
    expect(new Set(FUNCTION_NAMES.map(roleOf)).size).toBe(FUNCTION_NAMES.length);
  });

  it('creates no shared default role', () => {
    expect(resources.IamRoleLambdaExecution).toBeUndefined();
  });

  it('uses no wildcard action', () => {
    expect(allStatements().flatMap((s) => s.Action.filter((a) => a.includes('*')))).toEqual([]);
  });

  it('allows only, never denies through, identity statements', () => {
    expect(allStatements().filter((s) => s.Effect !== 'Allow')).toEqual([]);
  });

  // Neither DetectLabels nor S3 Batch Operations' CreateJob has a resource ARN to scope to.
  it("scopes every statement to named resources, '*' only for DetectLabels and CreateJob", () => {
    const unscoped = allStatements().filter(
      (s) =>
        s.Resource.some((r) => r === '*' || r.endsWith(':*:*')) &&
        !(s.Action.length === 1 && ['rekognition:DetectLabels', 's3:CreateJob'].includes(s.Action[0] as string)),
    );
    expect(unscoped).toEqual([]);
  });

  it.each(FUNCTION_NAMES)('maps every AWS call in the %s bundle to an IAM action', (fn) => {
    expect(actionsSentBy(pkg, fn).unknown).toEqual([]);
  });

  it.each(FUNCTION_NAMES)('allows the %s role exactly the actions its code sends', (fn) => {
    const granted = new Set(statementsOf(fn).flatMap((s) => s.Action));
    const needed = new Set([...actionsSentBy(pkg, fn).actions, ...PLATFORM_ACTIONS[fn]]);
    expect([...granted].sort()).toEqual([...needed].sort());
  });

  it.each([
    ['ingest', 's3:GetObject', ['{ImagesBucket.Arn}/processed/*', '{ImagesBucket.Arn}/uploads/*', IMPORT_SOURCES]],
    ['ingest', 's3:GetObjectVersion', [IMPORT_SOURCES]],
    ['ingest', 's3:DeleteObject', ['{ImagesBucket.Arn}/thumbnails/*', '{ImagesBucket.Arn}/uploads/*']],
    [
      'ingest',
      's3:PutObject',
      [
        '{ImagesBucket.Arn}/duplicates/*',
        '{ImagesBucket.Arn}/failed/*',
        '{ImagesBucket.Arn}/processed/*',
        '{ImagesBucket.Arn}/thumbnails/*',
      ],
    ],
    ['api', 's3:GetObject', ['{ImagesBucket.Arn}/processed/*', '{ImagesBucket.Arn}/thumbnails/*']],
    ['ingest', 's3:ListBucket', ['{ImagesBucket.Arn}', IMPORT_SOURCES]],
    ['batches', 's3:PutObject', ['{ImagesBucket.Arn}/exports/*', '{ImagesBucket.Arn}/uploads/*']],
    [
      'batches',
      's3:GetObject',
      ['{ImagesBucket.Arn}/exports/*', '{ImagesBucket.Arn}/processed/*', '{ImagesBucket.Arn}/thumbnails/*', IMPORT_MANIFESTS],
    ],
    ['batches', 'iam:PassRole', ['{ImportJobRole.Arn}']],
    ['importTask', 'sqs:SendMessage', ['{IngestQueue.Arn}']],
    ['batches', 'sqs:SendMessage', ['{CallbackQueue.Arn}', '{EraseQueue.Arn}', '{IngestQueue.Arn}']],
    ['ingest', 'sqs:SendMessage', ['{CallbackQueue.Arn}']],
    ['ingest', 'sqs:ChangeMessageVisibility', ['{IngestQueue.Arn}']],
    ['callbacks', 'sqs:SendMessage', ['{CallbackQueue.Arn}']],
    ['erase', 's3:ListBucket', ['{ImagesBucket.Arn}']],
    ['reconcile', 's3:ListBucket', ['{ImagesBucket.Arn}']],
    ['reconcile', 'sqs:SendMessage', ['{CallbackQueue.Arn}', '{IngestQueue.Arn}']],
    // The running imports (partition IMPORT#LIVE# of the table, a Query on its key), the callbacks owed and the
    // re-detection runs (their indexes).
    [
      'reconcile',
      'dynamodb:Query',
      ['{ImagesTable.Arn}', '{ImagesTable.Arn}/index/callbacks-due', '{ImagesTable.Arn}/index/redetect-runs'],
    ],
    ['reconcile', 's3:DescribeJob', ['arn:${AWS::Partition}:s3:${AWS::Region}:${AWS::AccountId}:job/*']],
    ['batches', 's3:DescribeJob', ['arn:${AWS::Partition}:s3:${AWS::Region}:${AWS::AccountId}:job/*']],
    ['reconcile', 'iam:PassRole', ['{ImportJobRole.Arn}']],
    ['reconcile', 's3:GetObject', [IMPORT_MANIFESTS]],
    ['expire', 'dynamodb:Query', ['{ImagesTable.Arn}/index/batches-expiring']],
    ['expire', 'dynamodb:UpdateItem', ['{ImagesTable.Arn}']],
    ['expire', 'sqs:SendMessage', ['{EraseQueue.Arn}']],
    ['route', 'sqs:SendMessage', ['{IngestQueue.Arn}']],
  ] as const)('lets %s use %s only on %j', (fn, action, expected) => {
    const on = statementsOf(fn)
      .filter((s) => s.Action.includes(action))
      .flatMap((s) => s.Resource);
    expect([...new Set(on)].sort()).toEqual([...expected]);
  });

  it.each(FUNCTION_NAMES)('lets %s use DynamoDB only on the table and its indexes', (fn) => {
    const on = statementsOf(fn)
      .filter((s) => s.Action.some((a) => a.startsWith('dynamodb:')))
      .flatMap((s) => s.Resource);
    expect(on.filter((r) => r !== '{ImagesTable.Arn}' && !/^\{ImagesTable\.Arn\}\/index\/(\*|[a-z-]+)$/.test(r))).toEqual([]);
  });

  it.each(FUNCTION_NAMES)('lets %s write logs only to its own log group', (fn) => {
    const on = statementsOf(fn)
      .filter((s) => s.Action.some((a) => a.startsWith('logs:')))
      .flatMap((s) => s.Resource);
    const name = props(FUNCTIONS[fn]).FunctionName as string;
    expect(on).toEqual([`arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${name}:*`]);
  });

  it('gives the api function reads only', () => {
    const granted = statementsOf('api')
      .flatMap((s) => s.Action)
      .filter((a) => !a.startsWith('logs:'));
    expect([...new Set(granted)].sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query', 's3:GetObject']);
  });

  it('lets reconcile list the bucket only under uploads/', () => {
    const role = resources[roleOf('reconcile')] as CfnResource;
    const statements = (role.Properties.Policies as { PolicyDocument: { Statement: Record<string, unknown>[] } }[]).flatMap(
      (p) => p.PolicyDocument.Statement,
    );
    const listing = statements.filter((s) => list(s.Action as string | string[]).includes('s3:ListBucket'));
    expect(listing.map((s) => s.Condition)).toEqual([{ StringLike: { 's3:prefix': ['uploads/*'] } }]);
  });

  it('lets ingest receive only from the upload queue', () => {
    const on = statementsOf('ingest')
      .filter((s) => s.Action.includes('sqs:ReceiveMessage'))
      .flatMap((s) => s.Resource);
    expect(on).toEqual(['{IngestQueue.Arn}']);
  });

  it.each([
    ['erase', '{EraseQueue.Arn}'],
    ['callbacks', '{CallbackQueue.Arn}'],
    ['route', '{UploadEventsQueue.Arn}'],
  ] as const)('lets %s receive only from its own queue', (fn, queue) => {
    const on = statementsOf(fn)
      .filter((s) => s.Action.includes('sqs:ReceiveMessage'))
      .flatMap((s) => s.Resource);
    expect(on).toEqual([queue]);
  });
});

describe('upload events: bucket → queue → ingest', () => {
  const mapping = () => {
    const found = resourcesOfType('AWS::Lambda::EventSourceMapping').filter(
      ([, r]) => render(r.Properties.FunctionName) === '{IngestLambdaFunction.Arn}',
    );
    expect(found).toHaveLength(1);
    return (found[0] as [string, CfnResource])[1].Properties;
  };
  const custom = () =>
    pkg.service.custom as { rekognition: Record<string, number>; ingest: Record<string, number>; retention: Record<string, number> };

  it('feeds ingest from the upload queue', () => {
    expect([render(mapping().EventSourceArn), render(mapping().FunctionName)]).toEqual(['{IngestQueue.Arn}', '{IngestLambdaFunction.Arn}']);
  });

  it('reports partial batch failures', () => {
    expect(mapping().FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('caps concurrency at what the configured Rekognition TPS allows', () => {
    const { tps, secondsPerImage } = custom().rekognition as { tps: number; secondsPerImage: number };
    const expected = rules.maximumConcurrency(tps, secondsPerImage, custom().ingest.imagesInFlight as number);
    expect((mapping().ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency).toBe(expected);
  });

  it('runs as many images at once per invocation as the concurrency cap assumes', () => {
    const env = (props('IngestLambdaFunction').Environment as { Variables: Record<string, string> }).Variables;
    expect(Number(env.INGEST_PARALLELISM)).toBe(custom().ingest.imagesInFlight);
  });

  it('hides a message for at least six times the ingest timeout', () => {
    const timeout = props('IngestLambdaFunction').Timeout as number;
    expect(props('IngestQueue').VisibilityTimeout as number).toBeGreaterThanOrEqual(
      6 * timeout + (mapping().MaximumBatchingWindowInSeconds as number),
    );
  });

  it('moves a message that keeps failing to a dead-letter queue', () => {
    const redrive = props('IngestQueue').RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
    const dlq = render(redrive.deadLetterTargetArn).replace(/^\{(.+)\.Arn\}$/, '$1');
    expect([resources[dlq]?.Type, redrive.maxReceiveCount >= 2]).toEqual(['AWS::SQS::Queue', true]);
  });

  it('lets only S3, for this bucket and account, send to the upload events queue', () => {
    const policy = props('UploadEventsQueuePolicy');
    const statements = (policy.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    expect(statements.map((s) => ({ ...s, Resource: render(s.Resource), Condition: JSON.parse(JSON.stringify(s.Condition)) }))).toEqual([
      {
        Sid: expect.any(String),
        Effect: 'Allow',
        Principal: { Service: 's3.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: '{UploadEventsQueue.Arn}',
        Condition: {
          ArnEquals: { 'aws:SourceArn': { 'Fn::Sub': expect.stringMatching(/^arn:\$\{AWS::Partition\}:s3:::/) } },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
    ]);
  });

  it('names the same bucket in the queue policy as the bucket it creates', () => {
    const statement = (
      props('UploadEventsQueuePolicy').PolicyDocument as {
        Statement: { Condition: { ArnEquals: Record<string, { 'Fn::Sub': string }> } }[];
      }
    ).Statement[0];
    const arn = statement?.Condition.ArnEquals['aws:SourceArn']?.['Fn::Sub'];
    expect(arn).toBe(`arn:\${AWS::Partition}:s3:::${(props('ImagesBucket').BucketName as { 'Fn::Sub': string })['Fn::Sub']}`);
  });

  it('notifies the upload events queue of objects created under uploads/ only', () => {
    const config = props('ImagesBucket').NotificationConfiguration as { QueueConfigurations: Record<string, unknown>[] };
    expect(config.QueueConfigurations.map((c) => ({ ...c, Queue: render(c.Queue) }))).toEqual([
      {
        Event: 's3:ObjectCreated:*',
        Queue: '{UploadEventsQueue.Arn}',
        Filter: { S3Key: { Rules: [{ Name: 'prefix', Value: 'uploads/' }] } },
      },
    ]);
  });

  it('sets the bucket notification only once the queue policy exists', () => {
    expect(list(resources.ImagesBucket?.DependsOn)).toContain('UploadEventsQueuePolicy');
  });

  it('lets nobody but the route function and the sweep send to the fair uploads queue: no queue policy names it', () => {
    const policies = resourcesOfType('AWS::SQS::QueuePolicy').flatMap(([, r]) => list(r.Properties.Queues as unknown[]).map(render));
    expect(policies).not.toContain('{IngestQueue}');
  });

  it('routes the upload events to the fair uploads queue through the route function', () => {
    const found = resourcesOfType('AWS::Lambda::EventSourceMapping').filter(
      ([, r]) => render(r.Properties.FunctionName) === '{RouteLambdaFunction.Arn}',
    );
    const env = (props('RouteLambdaFunction').Environment as { Variables: Record<string, unknown> }).Variables;
    expect(found.map(([, r]) => [render(r.Properties.EventSourceArn), r.Properties.FunctionResponseTypes])).toEqual([
      ['{UploadEventsQueue.Arn}', ['ReportBatchItemFailures']],
    ]);
    expect(render(env.INGEST_QUEUE_URL)).toBe('{IngestQueue}');
  });

  it('moves an upload event the router keeps failing on to a dead-letter queue of its own, and hides it six times the router timeout', () => {
    const redrive = props('UploadEventsQueue').RedrivePolicy as { deadLetterTargetArn: unknown };
    expect(render(redrive.deadLetterTargetArn)).toBe('{UploadEventsDeadLetterQueue.Arn}');
    expect(props('UploadEventsQueue').VisibilityTimeout as number).toBeGreaterThanOrEqual(
      6 * (props('RouteLambdaFunction').Timeout as number),
    );
  });
});

describe('reconciliation sweep', () => {
  const env = () => (props('ReconcileLambdaFunction').Environment as { Variables: Record<string, unknown> }).Variables;

  it('runs on a schedule of at most every few minutes', () => {
    const rules = resourcesOfType('AWS::Events::Rule').filter(([, r]) =>
      JSON.stringify(r.Properties.Targets).includes('ReconcileLambdaFunction'),
    );
    expect(rules.map(([, r]) => r.Properties.ScheduleExpression)).toEqual([expect.stringMatching(/^rate\((\d+) minutes?\)$/)]);
  });

  it('sends to the upload queue the ingest reads', () => {
    expect(render(env().INGEST_QUEUE_URL)).toBe('{IngestQueue}');
  });

  it('waits longer than the queue hides a message before queueing an upload again', () => {
    expect(Number(env().RECONCILE_GRACE_SECONDS)).toBeGreaterThan(props('IngestQueue').VisibilityTimeout as number);
  });

  it('stops listing before the function times out', () => {
    expect(Number(env().RECONCILE_MAX_SECONDS)).toBeLessThan(props('ReconcileLambdaFunction').Timeout as number);
  });
});

describe('expiry sweep', () => {
  it('runs on a schedule of at most every few minutes', () => {
    const rules = resourcesOfType('AWS::Events::Rule').filter(([, r]) => JSON.stringify(r.Properties.Targets).includes(FUNCTIONS.expire));
    expect(rules.map(([, r]) => r.Properties.ScheduleExpression)).toEqual([expect.stringMatching(/^rate\(([1-9]|1[0-5]) minutes?\)$/)]);
  });

  it('queues erasures to the queue the erase function reads', () => {
    const env = (props(FUNCTIONS.expire).Environment as { Variables: Record<string, unknown> }).Variables;
    const eraseSource = resourcesOfType('AWS::Lambda::EventSourceMapping').find(([, r]) =>
      JSON.stringify(r.Properties.FunctionName).includes(FUNCTIONS.erase),
    );
    expect([render(env.ERASE_QUEUE_URL), render(eraseSource?.[1].Properties.EventSourceArn)]).toEqual(['{EraseQueue}', '{EraseQueue.Arn}']);
  });

  it('finds batches by a sparse index of summaries keyed by expiry, keys only', () => {
    const index = (
      (props('ImagesTable').GlobalSecondaryIndexes ?? []) as { IndexName: string; KeySchema: unknown; Projection: unknown }[]
    ).find((i) => i.IndexName === INDEX.batchesExpiring);
    expect(index).toEqual({
      IndexName: INDEX.batchesExpiring,
      KeySchema: [
        { AttributeName: 'exp_due', KeyType: 'HASH' },
        { AttributeName: 'ttl', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    });
  });
});

describe('images bucket', () => {
  it('blocks every kind of public access', () => {
    expect(props('ImagesBucket').PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });

  it("lets browsers POST upload forms from any origin, and GET (the export's presigned redirect) only from the web app's", () => {
    const rules = (props('ImagesBucket').CorsConfiguration as { CorsRules: { AllowedMethods: string[]; AllowedOrigins: unknown[] }[] })
      .CorsRules;
    const byMethod = rules.map((r) => [r.AllowedMethods, r.AllowedOrigins.map(render)]);

    expect(byMethod).toEqual([
      [['POST'], ['*']],
      [['GET'], ['https://{HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}']],
    ]);
    expect(resources.HttpApi?.Type).toBe('AWS::ApiGatewayV2::Api');
  });

  it('encrypts objects at rest', () => {
    const sse = props('ImagesBucket').BucketEncryption as {
      ServerSideEncryptionConfiguration: { ServerSideEncryptionByDefault: { SSEAlgorithm: string } }[];
    };
    expect(sse.ServerSideEncryptionConfiguration[0]?.ServerSideEncryptionByDefault.SSEAlgorithm).toMatch(/^(AES256|aws:kms)$/);
  });

  it('expires each prefix by a lifecycle rule', () => {
    const rules = (
      props('ImagesBucket').LifecycleConfiguration as { Rules: { Prefix: string; Status: string; ExpirationInDays: number }[] }
    ).Rules;
    const enabled = rules.filter((r) => r.Status === 'Enabled' && r.ExpirationInDays > 0).map((r) => r.Prefix);
    expect(enabled.sort()).toEqual(['duplicates/', 'exports/', 'failed/', 'processed/', 'thumbnails/', 'uploads/']);
  });

  it('keeps processed, duplicate, failed and thumbnail objects as long as the longest retention a batch may ask for', () => {
    const rules = (props('ImagesBucket').LifecycleConfiguration as { Rules: { Prefix: string; ExpirationInDays: number }[] }).Rules;
    const env = (props('ApiLambdaFunction').Environment as { Variables: Record<string, string> } | undefined)?.Variables ?? {};
    const maxRetention = Number(env.MAX_RETENTION_DAYS);
    // uploads/ holds only what ingest has not moved yet, exports/ only files fetched within the hour: both are transient.
    const short = rules.filter((r) => !['uploads/', 'exports/'].includes(r.Prefix) && r.ExpirationInDays < maxRetention);
    expect([maxRetention > 0, short]).toEqual([true, []]);
  });
});

describe('HTTP API', () => {
  const LOGICAL_IDS: Record<ApiFunctionName, string> = { api: FUNCTIONS.api, batches: FUNCTIONS.batches };
  /** Each route key with the function and payload version its integration invokes. */
  const awsRoutes = () =>
    resourcesOfType('AWS::ApiGatewayV2::Route').map(([, r]) => {
      const join = (r.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] })['Fn::Join'];
      const integration = props(join[1][1].Ref);
      return {
        key: r.Properties.RouteKey as string,
        target: render(integration.IntegrationUri),
        payload: integration.PayloadFormatVersion as string,
      };
    });
  /** API Gateway's matching: a {var} is one whole segment, {var+} the rest of the path. */
  const matches = (routeKey: string, method: string, samplePath: string) => {
    const [m, template] = routeKey.split(' ') as [string, string];
    if (m !== method && m !== 'ANY') return false;
    const want = template.split('/');
    const got = samplePath.split('/');
    for (let i = 0; i < want.length; i++) {
      const w = want[i] as string;
      if (/^\{.+\+\}$/.test(w)) return i < got.length;
      if (got[i] === undefined || (w.startsWith('{') ? got[i] === '' : got[i] !== w)) return false;
    }
    return want.length === got.length;
  };
  const sampleOf = (template: string) => template.replace(/\{[^}]+\}/g, 'x1');
  const arnOf = (fn: ApiFunctionName) => `{${LOGICAL_IDS[fn]}.Arn}`;

  it("throttles the $default stage as a whole: API Gateway has no per-client limits on HTTP APIs (those are the functions' token buckets)", () => {
    const settings = props('HttpApiStage').DefaultRouteSettings as { ThrottlingRateLimit: number; ThrottlingBurstLimit: number };
    const custom = (pkg.service.custom as { api: { throttleRate: number; throttleBurst: number } }).api;
    expect([settings.ThrottlingRateLimit, settings.ThrottlingBurstLimit]).toEqual([custom.throttleRate, custom.throttleBurst]);
    expect(settings.ThrottlingBurstLimit).toBeGreaterThanOrEqual(settings.ThrottlingRateLimit);
  });

  it('sends requests no route matches to the default function, which answers them in its own error shape', () => {
    expect(awsRoutes().find((r) => r.key === '$default')?.target).toBe(arnOf(DEFAULT_API_FUNCTION));
  });

  it('integrates every route with an API function, payload 2.0', () => {
    expect(new Set(awsRoutes().map((r) => `${r.target} ${r.payload}`))).toEqual(new Set(API_FUNCTIONS.map((fn) => `${arnOf(fn)} 2.0`)));
  });

  /** Of the routes that match, API Gateway picks the most specific: the one with the most literal segments. */
  const literalSegments = (routeKey: string) => routeKey.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;

  it.each(routeTargets().map((r) => [r.method, r.path, r.function] as const))('routes %s %s to the %s function', (method, template, fn) => {
    const reached = awsRoutes().filter((r) => matches(r.key, method, sampleOf(template)));
    const most = Math.max(...reached.map((r) => literalSegments(r.key)));
    expect(reached.filter((r) => literalSegments(r.key) === most).map((r) => r.target)).toEqual([arnOf(fn)]);
  });

  it('has no route that serves none of the route table', () => {
    const stale = awsRoutes().filter(
      (r) => r.key !== '$default' && !routeTargets().some((t) => matches(r.key, t.method, sampleOf(t.path))),
    );
    expect(stale.map((r) => r.key)).toEqual([]);
  });

  it.each([...API_FUNCTIONS])('points the %s function at the handler module the local stack runs', (fn) => {
    expect(props(LOGICAL_IDS[fn]).Handler).toBe(`${apiHandlerModule(fn)}.handler`);
  });
});

describe('bundles', () => {
  it('keeps the S3 client out of the api bundle', () => {
    expect(bundledInputs(pkg, 'api').filter((f) => /@aws-sdk\/(client-s3|s3-presigned-post)\//.test(f))).toEqual([]);
  });

  it('embeds the built web app in the api bundle, not its sources or esbuild', () => {
    const inputs = bundledInputs(pkg, 'api');

    expect(inputs.filter((f) => /^(web|scripts)\/|(^|\/)(esbuild|preact)\//.test(f))).toEqual([]);
    expect(inputs).toContain('lib/web/bundle.ts');
  });

  it.each(FUNCTION_NAMES)('bundles only the environment credential provider into %s (Lambda passes credentials in it)', (fn) => {
    const chain = bundledInputs(pkg, fn).filter((f) => /@aws-sdk\/(credential-provider-(?!env\/)|nested-clients\/)/.test(f));
    expect(chain).toEqual([]);
  });
});

describe('imports on S3 Batch Operations (docs/decisions/0042)', () => {
  const statements = (roleId: string) =>
    (props(roleId).Policies as { PolicyDocument: { Statement: Record<string, unknown>[] } }[]).flatMap((p) => p.PolicyDocument.Statement);
  const conditional = (roleId: string) => statements(roleId).filter((s) => 'Fn::If' in s);

  it('reads the source buckets from the importSourceBuckets parameter, none by default', () => {
    expect(pkg.template.Parameters?.ImportSourceBuckets).toMatchObject({ Type: 'CommaDelimitedList', Default: '' });
    expect(pkg.template.Conditions?.HasImportSources).toEqual({
      'Fn::Not': [{ 'Fn::Equals': [{ 'Fn::Join': ['', { Ref: 'ImportSourceBuckets' }] }, ''] }],
    });
  });

  it.each(['IngestRole', 'BatchesRole', 'ImportJobRole'])(
    'grants %s the source buckets only under HasImportSources, nothing otherwise',
    (roleId) => {
      expect(conditional(roleId).map((s) => [(s['Fn::If'] as unknown[])[0], (s['Fn::If'] as unknown[])[2]])).toEqual([
        ['HasImportSources', { Ref: 'AWS::NoValue' }],
      ]);
    },
  );

  it('lets only S3 Batch Operations of this account assume the job role, which invokes the task and writes reports under imports/', () => {
    const trust = (props('ImportJobRole').AssumeRolePolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    expect(trust).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'batchoperations.s3.amazonaws.com' },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
    const plain = roleStatements(resources.ImportJobRole as CfnResource).filter((s) => !s.Resource.includes(IMPORT_SOURCES));
    expect(plain.map((s) => [s.Action, s.Resource])).toEqual([
      [['lambda:InvokeFunction'], ['{ImportTaskLambdaFunction.Arn}']],
      [['s3:PutObject'], ['{ImagesBucket.Arn}/imports/*']],
    ]);
  });

  it('gives the batches function the task and the job role it creates jobs with, and passes that role to Batch Operations only', () => {
    const env = (props(FUNCTIONS.batches).Environment as { Variables: Record<string, unknown> }).Variables;
    expect([render(env.IMPORT_TASK_FUNCTION_ARN), render(env.IMPORT_JOB_ROLE_ARN)]).toEqual([
      '{ImportTaskLambdaFunction.Arn}',
      '{ImportJobRole.Arn}',
    ]);
    const pass = statements('BatchesRole').find((s) => s.Action === 'iam:PassRole');
    expect(pass?.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'batchoperations.s3.amazonaws.com' } });
  });
});
