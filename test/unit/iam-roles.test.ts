// Each function's role, read from serverless.yml and resources/ as the compiled template states it
// (test/deploy/template.test.ts checks the reading against `osls package`'s template), evaluated by IAM's rules for
// the (action, resource) pairs its code sends, with the ARNs AWS forms for them: an index is its own ARN.

import path from 'node:path';
import { dueCallbacksQuery } from '../../lib/store/callback/requeue';
import { expiredBatchesQuery } from '../../lib/store/expiry/expired';
import { reusableResultRequest } from '../../lib/store/image/reuse';
import { INDEX } from '../../lib/store/table/schema';
import { RoleDecisions, roleAllows } from '../../local/iam/evaluate';
import { type FunctionRole, type RoleTemplate, roleStatements, rolesFromTemplate } from '../../local/iam/roles';
import { roleTemplateFromSources } from '../../local/iam/template';

const ROOT = path.resolve(__dirname, '..', '..');
const PLACE = { region: 'eu-west-1', accountId: '123456789012' };
const TABLE = 'arn:aws:dynamodb:eu-west-1:123456789012:table/IceCatWrangler-dev';
const BUCKET = 'arn:aws:s3:::icecat-wrangler-dev-eu-west-1-123456789012';
const QUEUE = (name: string) => `arn:aws:sqs:eu-west-1:123456789012:icecat-wrangler-dev-${name}`;
const indexArn = (name: string | undefined) => `${TABLE}/index/${name}`;

let roles: Record<string, FunctionRole>;
let template: RoleTemplate;
beforeAll(() => {
  template = roleTemplateFromSources(ROOT);
  roles = rolesFromTemplate(template, PLACE);
});

/** The calls each function's code sends, each with the resource its request names. */
const CALLS: [fn: string, action: string, resource: string, why: string][] = [
  // The reuse lookup of every new image (lib/ingest/steps/detect.ts → lib/store/image/reuse.ts).
  ['ingest', 'dynamodb:Query', indexArn(reusableResultRequest('T', 'c', 'f', 1).IndexName), 'reuse lookup (client-fprint)'],
  ['ingest', 'dynamodb:Query', TABLE, "a batch's recount"],
  ['ingest', 'dynamodb:UpdateItem', TABLE, 'claim'],
  ['ingest', 's3:GetObject', `${BUCKET}/uploads/c/b/cat.jpg`, 'read the upload'],
  ['ingest', 's3:PutObject', `${BUCKET}/processed/c/b/cat.jpg`, 'store the outcome'],
  // A re-detection reads each image again where it rests (lib/redetect/job.ts).
  ['ingest', 's3:GetObject', `${BUCKET}/processed/c/b/cat.jpg`, 're-detection'],
  ['ingest', 'sqs:SendMessage', QUEUE('callbacks'), 'completion callback'],
  ['ingest', 'rekognition:DetectLabels', '*', 'labels'],
  ['api', 'dynamodb:Query', indexArn(INDEX.clientTime), 'listings'],
  ['api', 'dynamodb:Query', indexArn(INDEX.clientFprint), 'known fingerprints'],
  ['api', 'dynamodb:BatchGetItem', TABLE, 'images by fingerprint'],
  ['batches', 'dynamodb:Query', TABLE, "a batch's partition"],
  ['batches', 's3:PutObject', `${BUCKET}/uploads/c/b/cat.jpg`, 'presigned upload'],
  ['reconcile', 'dynamodb:Query', indexArn(dueCallbacksQuery('T', 1, 1).IndexName), 'callbacks owed'],
  ['expire', 'dynamodb:Query', indexArn(expiredBatchesQuery('T', 1, 1).IndexName), 'batches expired'],
  ['erase', 'dynamodb:Query', TABLE, "a batch's keys"],
  ['erase', 'dynamodb:BatchWriteItem', TABLE, "a batch's items"],
  ['route', 'sqs:SendMessage', QUEUE('uploads'), 'the fair uploads queue'],
  ['callbacks', 'dynamodb:UpdateItem', TABLE, 'delivery state'],
  // An import's Batch Operations task (lib/import/batch-operations-task.ts → enqueue.ts): the send mark and the quota.
  ['importTask', 'dynamodb:UpdateItem', TABLE, "the object's send mark and quota count"],
  ['importTask', 'dynamodb:GetItem', TABLE, "the client's limits, the day's usage"],
  ['importTask', 'sqs:SendMessage', QUEUE('uploads'), 'the fair uploads queue'],
  ['batches', 's3:CreateJob', '*', "an import's Batch Operations job"],
  // The import's progress on its batch summary, each object counted on its upload item (lib/store/imports/jobs.ts).
  ['importTask', 'dynamodb:UpdateItem', TABLE, "the import's listed/enqueued/skipped counts"],
  // The reconcile sweep follows each running import's job (lib/reconcile/import-jobs.ts).
  ['reconcile', 'dynamodb:Query', TABLE, 'the running imports (IMPORT#LIVE#)'],
  ['reconcile', 'dynamodb:DeleteItem', TABLE, "a finished import's live mark"],
  ['reconcile', 's3:DescribeJob', 'arn:aws:s3:eu-west-1:123456789012:job/job-1', "an import job's status"],
  ['reconcile', 's3:CreateJob', '*', 'an import job started again after the quota reset'],
];

describe('roles read from the template', () => {
  it('gives every function its own role', () => {
    expect(Object.keys(roles).sort()).toEqual([
      'api',
      'batches',
      'callbacks',
      'erase',
      'expire',
      'importTask',
      'ingest',
      'reconcile',
      'route',
    ]);
  });

  it.each(CALLS)('allows %s %s on %s (%s)', async (fn, action, resource) => {
    await expect(roleAllows((roles[fn] as FunctionRole).statements, { action, resource })).resolves.toBe(true);
  });

  it('allows ingest no Query of an index it never reads', async () => {
    await expect(
      roleAllows((roles.ingest as FunctionRole).statements, { action: 'dynamodb:Query', resource: indexArn(INDEX.clientTime) }),
    ).resolves.toBe(false);
  });

  it('lets reconcile list uploads/ only, by its condition', async () => {
    const statements = (roles.reconcile as FunctionRole).statements;
    await expect(roleAllows(statements, { action: 's3:ListBucket', resource: BUCKET, context: { 's3:prefix': 'uploads/' } })).resolves.toBe(
      true,
    );
    await expect(
      roleAllows(statements, { action: 's3:ListBucket', resource: BUCKET, context: { 's3:prefix': 'processed/' } }),
    ).resolves.toBe(false);
  });

  it('refuses what a role lacks: the api writes nothing', async () => {
    await expect(roleAllows((roles.api as FunctionRole).statements, { action: 'dynamodb:PutItem', resource: TABLE })).resolves.toBe(false);
  });
});

describe('RoleDecisions', () => {
  it('answers as the evaluator does, once per pattern class, for keys it has not seen', async () => {
    const decisions = new RoleDecisions((roles.ingest as FunctionRole).statements, PLACE.accountId);

    const answers = await Promise.all([
      decisions.allows({ action: 's3:GetObject', resource: `${BUCKET}/uploads/a/b/1.jpg` }),
      decisions.allows({ action: 's3:GetObject', resource: `${BUCKET}/uploads/x/y/2.jpg` }),
      decisions.allows({ action: 's3:GetObject', resource: `${BUCKET}/exports/a/b.csv` }),
      decisions.allows({ action: 's3:PutObject', resource: `${BUCKET}/uploads/a/b/1.jpg` }),
    ]);

    expect(answers).toEqual([true, true, false, false]);
  });

  it('keeps condition keys apart', async () => {
    const decisions = new RoleDecisions((roles.reconcile as FunctionRole).statements, PLACE.accountId);

    const allowed = await decisions.allows({ action: 's3:ListBucket', resource: BUCKET, context: { 's3:prefix': 'uploads/' } });
    const refused = await decisions.allows({ action: 's3:ListBucket', resource: BUCKET, context: { 's3:prefix': 'failed/' } });

    expect([allowed, refused]).toEqual([true, false]);
  });
});

describe('the import roles (resources/imports.yml, docs/decisions/0042)', () => {
  const SOURCES = { ...PLACE, parameters: { ImportSourceBuckets: 'acme-photos,zeta-archive' } };
  const TASK = 'arn:aws:lambda:eu-west-1:123456789012:function:icecat-wrangler-dev-importTask';
  const JOB_ROLE = 'arn:aws:iam::123456789012:role/ImportJobRole';
  const job = () => roleStatements(template, 'ImportJobRole', SOURCES);
  const withSources = () => rolesFromTemplate(template, SOURCES);

  it.each([
    ['lambda:InvokeFunction', TASK, 'invoke the task, once per object'],
    ['s3:PutObject', `${BUCKET}/imports/acme/b1/job-1/results/1.csv`, 'the completion report'],
    ['s3:GetObject', 'arn:aws:s3:::acme-photos/manifests/2024.csv', "the client's manifest"],
    ['s3:GetObjectVersion', 'arn:aws:s3:::zeta-archive/inventory/manifest.json', "an Inventory manifest's version"],
    ['s3:ListBucket', 'arn:aws:s3:::acme-photos', 'the manifest generator lists the prefix'],
  ])('lets the job role %s on %s (%s)', async (action, resource) => {
    await expect(roleAllows(job(), { action, resource })).resolves.toBe(true);
  });

  it.each([
    ['s3:GetObject', 'arn:aws:s3:::other-bucket/a.csv'],
    ['s3:PutObject', `${BUCKET}/processed/acme/b1/a.jpg`],
    ['s3:PutObject', 'arn:aws:s3:::acme-photos/a.jpg'],
    ['lambda:InvokeFunction', 'arn:aws:lambda:eu-west-1:123456789012:function:icecat-wrangler-dev-ingest'],
  ])('refuses the job role %s on %s', async (action, resource) => {
    await expect(roleAllows(job(), { action, resource })).resolves.toBe(false);
  });

  it("lets the ingest read the listed source buckets' objects and versions, and nothing when none is listed", async () => {
    const ingest = (withSources().ingest as FunctionRole).statements;
    const object = 'arn:aws:s3:::acme-photos/2024/cat.jpg';

    const answers = await Promise.all([
      roleAllows(ingest, { action: 's3:GetObject', resource: object }),
      roleAllows(ingest, { action: 's3:GetObjectVersion', resource: object }),
      roleAllows(ingest, { action: 's3:ListBucket', resource: 'arn:aws:s3:::zeta-archive' }),
      roleAllows(ingest, { action: 's3:PutObject', resource: object }),
      roleAllows(ingest, { action: 's3:DeleteObject', resource: object }),
      roleAllows(ingest, { action: 's3:GetObject', resource: 'arn:aws:s3:::other-bucket/cat.jpg' }),
      roleAllows((roles.ingest as FunctionRole).statements, { action: 's3:GetObject', resource: object }),
    ]);

    expect(answers).toEqual([true, true, true, false, false, false, false]);
  });

  it('lets batches pass the job role to S3 Batch Operations only, and read manifests in the source buckets', async () => {
    const batches = (withSources().batches as FunctionRole).statements;

    const answers = await Promise.all([
      roleAllows(batches, {
        action: 'iam:PassRole',
        resource: JOB_ROLE,
        context: { 'iam:PassedToService': 'batchoperations.s3.amazonaws.com' },
      }),
      roleAllows(batches, { action: 'iam:PassRole', resource: JOB_ROLE, context: { 'iam:PassedToService': 'lambda.amazonaws.com' } }),
      roleAllows(batches, {
        action: 'iam:PassRole',
        resource: 'arn:aws:iam::123456789012:role/IngestRole',
        context: { 'iam:PassedToService': 'batchoperations.s3.amazonaws.com' },
      }),
      roleAllows(batches, { action: 's3:GetObject', resource: 'arn:aws:s3:::acme-photos/m.csv' }),
    ]);

    expect(answers).toEqual([true, false, false, true]);
  });

  it("lets reconcile pass the job role to S3 Batch Operations only, and describe this account's jobs only", async () => {
    const reconcile = (withSources().reconcile as FunctionRole).statements;

    const answers = await Promise.all([
      roleAllows(reconcile, {
        action: 'iam:PassRole',
        resource: JOB_ROLE,
        context: { 'iam:PassedToService': 'batchoperations.s3.amazonaws.com' },
      }),
      roleAllows(reconcile, { action: 'iam:PassRole', resource: JOB_ROLE, context: { 'iam:PassedToService': 'lambda.amazonaws.com' } }),
      roleAllows(reconcile, { action: 's3:DescribeJob', resource: 'arn:aws:s3:eu-west-1:210987654321:job/job-1' }),
      roleAllows(reconcile, { action: 's3:GetObject', resource: 'arn:aws:s3:::acme-photos/m.csv' }),
    ]);

    expect(answers).toEqual([true, false, false, true]);
  });

  it('lets the task send to the uploads queue and write the table only: no S3, no other queue', async () => {
    const task = (withSources().importTask as FunctionRole).statements;

    const answers = await Promise.all([
      roleAllows(task, { action: 'sqs:SendMessage', resource: QUEUE('callbacks') }),
      roleAllows(task, { action: 's3:GetObject', resource: 'arn:aws:s3:::acme-photos/2024/cat.jpg' }),
      roleAllows(task, { action: 'dynamodb:Query', resource: indexArn(INDEX.clientFprint) }),
      roleAllows(task, { action: 'dynamodb:DeleteItem', resource: TABLE }),
    ]);

    expect(answers).toEqual([false, false, false, false]);
  });
});
