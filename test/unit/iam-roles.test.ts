// Each function's role, read from serverless.yml and resources/ as the compiled template states it
// (test/deploy/template.test.ts checks the reading against `osls package`'s template), evaluated by IAM's rules for
// the (action, resource) pairs its code sends, with the ARNs AWS forms for them: an index is its own ARN.
import { rolesFromTemplate, type FunctionRole } from '../../local/iam-roles';
import { roleAllows, RoleDecisions } from '../../local/iam-evaluate';
import { roleTemplateFromSources } from '../../local/iam-template';
import { reusableResultRequest } from '../../lib/store/client-patterns';
import { dueCallbacksQuery } from '../../lib/store/callback-requeue';
import { expiredBatchesQuery } from '../../lib/store/expired-batches';
import { INDEX } from '../../lib/store/schema';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const PLACE = { region: 'eu-west-1', accountId: '123456789012' };
const TABLE = 'arn:aws:dynamodb:eu-west-1:123456789012:table/IceCatWrangler-dev';
const BUCKET = 'arn:aws:s3:::icecat-wrangler-dev-eu-west-1-123456789012';
const QUEUE = (name: string) => `arn:aws:sqs:eu-west-1:123456789012:icecat-wrangler-dev-${name}`;
const indexArn = (name: string | undefined) => `${TABLE}/index/${name}`;

let roles: Record<string, FunctionRole>;
beforeAll(() => {
  roles = rolesFromTemplate(roleTemplateFromSources(ROOT), PLACE);
});

/** The calls each function's code sends, each with the resource its request names. */
const CALLS: [fn: string, action: string, resource: string, why: string][] = [
  // The reuse lookup of every new image (lib/ingest/steps/detect.ts → lib/store/reuse-lookup.ts).
  ['ingest', 'dynamodb:Query', indexArn(reusableResultRequest('T', 'c', 'f', 1).IndexName), 'reuse lookup (client-fprint)'],
  ['ingest', 'dynamodb:Query', TABLE, "a batch's recount"],
  ['ingest', 'dynamodb:UpdateItem', TABLE, 'claim'],
  ['ingest', 's3:GetObject', `${BUCKET}/uploads/c/b/cat.jpg`, 'read the upload'],
  ['ingest', 's3:PutObject', `${BUCKET}/processed/c/b/cat.jpg`, 'store the outcome'],
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
];

describe('roles read from the template', () => {
  it('gives every function its own role', () => {
    expect(Object.keys(roles).sort()).toEqual(['api', 'batches', 'callbacks', 'erase', 'expire', 'ingest', 'reconcile', 'route']);
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
