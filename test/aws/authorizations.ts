// What one AWS request is authorized as: its IAM actions and the resource ARNs AWS evaluates them on, formed as AWS
// forms them (a DynamoDB index is table/T/index/I; a transaction is each action on its table; CopyObject is a GetObject
// of the source and a PutObject of the target; SendMessageBatch is sqs:SendMessage; DetectLabels on an S3Object is
// also the caller's s3:GetObject of it, which Rekognition makes with the caller's credentials).
import type { Authorization } from './role-check';

export interface AwsRequest {
  service: string;
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface Described {
  operation: string;
  authorizations: Authorization[];
}

export interface Account {
  region: string;
  accountId: string;
}

type Json = Record<string, unknown>;

const tableArn = (a: Account, table: string): string =>
  table.startsWith('arn:') ? table : `arn:aws:dynamodb:${a.region}:${a.accountId}:table/${table}`;

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

function dynamodb(a: Account, op: string, body: Json): Authorization[] {
  if (op === 'TransactWriteItems' || op === 'TransactGetItems') {
    return (body.TransactItems as Json[]).map((item) => {
      const [kind, spec] = Object.entries(item)[0] as [string, Json];
      return { action: `dynamodb:${TRANSACT_ACTIONS[kind] as string}`, resource: tableArn(a, spec.TableName as string) };
    });
  }
  if (op === 'BatchGetItem' || op === 'BatchWriteItem')
    return Object.keys(body.RequestItems as Json).map((t) => ({ action: `dynamodb:${op}`, resource: tableArn(a, t) }));
  const table = tableArn(a, body.TableName as string);
  const resource = body.IndexName ? `${table}/index/${body.IndexName as string}` : table;
  return [{ action: `dynamodb:${op}`, resource }];
}

const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

function sqs(a: Account, op: string, body: Json): Authorization[] {
  const name = body.QueueUrl ? ((body.QueueUrl as string).split('/').pop() as string) : (body.QueueName as string);
  return [{ action: `sqs:${SQS_ACTIONS[op] ?? op}`, resource: `arn:aws:sqs:${a.region}:${a.accountId}:${name}` }];
}

function rekognition(op: string, body: Json): Authorization[] {
  const s3Object = (body.Image as { S3Object?: { Bucket: string; Name: string } } | undefined)?.S3Object;
  const read = s3Object ? [{ action: 's3:GetObject', resource: `arn:aws:s3:::${s3Object.Bucket}/${s3Object.Name}` }] : [];
  return [{ action: `rekognition:${op}`, resource: '*' }, ...read];
}

function events(a: Account, op: string, body: Json): Authorization[] {
  const buses = new Set(((body.Entries as Json[] | undefined) ?? []).map((e) => (e.EventBusName as string | undefined) ?? 'default'));
  return [...buses].map((bus) => ({
    action: `events:${op}`,
    resource: bus.startsWith('arn:') ? bus : `arn:aws:events:${a.region}:${a.accountId}:event-bus/${bus}`,
  }));
}

/** The operation of a JSON-protocol request (X-Amz-Target: Prefix.Operation). */
const targetOperation = (headers: AwsRequest['headers']): string | undefined => {
  const target = headers['x-amz-target'];
  return typeof target === 'string' ? target.split('.').pop() : undefined;
};

function s3Object(method: string, bucket: string, key: string, q: URLSearchParams, headers: AwsRequest['headers']): Described {
  const object = `arn:aws:s3:::${bucket}/${key}`;
  const copySource = headers['x-amz-copy-source'];
  if (method === 'PUT' && typeof copySource === 'string') {
    const source = decodeURIComponent(copySource.replace(/^\//, '').split('?')[0] as string);
    return {
      operation: q.has('uploadId') ? 'UploadPartCopy' : 'CopyObject',
      authorizations: [
        { action: 's3:GetObject', resource: `arn:aws:s3:::${source}` },
        { action: 's3:PutObject', resource: object },
      ],
    };
  }
  const one = (operation: string, action: string): Described => ({ operation, authorizations: [{ action, resource: object }] });
  if (method === 'GET' || method === 'HEAD')
    return q.has('tagging')
      ? one('GetObjectTagging', 's3:GetObjectTagging')
      : one(`${method === 'GET' ? 'Get' : 'Head'}Object`, 's3:GetObject');
  if (method === 'DELETE')
    return q.has('uploadId') ? one('AbortMultipartUpload', 's3:AbortMultipartUpload') : one('DeleteObject', 's3:DeleteObject');
  if (method === 'PUT')
    return q.has('tagging')
      ? one('PutObjectTagging', 's3:PutObjectTagging')
      : one(q.has('uploadId') ? 'UploadPart' : 'PutObject', 's3:PutObject');
  if (method === 'POST' && q.has('uploads')) return one('CreateMultipartUpload', 's3:PutObject');
  if (method === 'POST' && q.has('uploadId')) return one('CompleteMultipartUpload', 's3:PutObject');
  return one(`${method} object`, `s3:Unknown${method}`);
}

function s3(request: AwsRequest): Described {
  const url = new URL(request.url, 'http://s3');
  const [bucket = '', ...rest] = url.pathname.replace(/^\//, '').split('/');
  const key = decodeURIComponent(rest.join('/'));
  const q = url.searchParams;
  if (key) return s3Object(request.method, bucket, key, q, request.headers);
  const bucketArn = `arn:aws:s3:::${bucket}`;
  if (request.method === 'POST' && q.has('delete')) {
    const keys = [...request.body.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => unescapeXml(m[1] as string));
    return { operation: 'DeleteObjects', authorizations: keys.map((k) => ({ action: 's3:DeleteObject', resource: `${bucketArn}/${k}` })) };
  }
  const listing = request.method === 'HEAD' || (request.method === 'GET' && [...q.keys()].every((k) => LIST_PARAMETERS.has(k)));
  if (listing) {
    const context = Object.fromEntries(
      ['prefix', 'delimiter', 'max-keys'].filter((k) => q.has(k)).map((k) => [`s3:${k}`, q.get(k) as string]),
    );
    return {
      operation: request.method === 'HEAD' ? 'HeadBucket' : 'ListObjectsV2',
      authorizations: [{ action: 's3:ListBucket', resource: bucketArn, context }],
    };
  }
  return { operation: `${request.method} bucket`, authorizations: [{ action: `s3:Unknown${request.method}`, resource: bucketArn }] };
}

const LIST_PARAMETERS = new Set([
  'list-type',
  'prefix',
  'delimiter',
  'continuation-token',
  'start-after',
  'max-keys',
  'encoding-type',
  'fetch-owner',
  'marker',
  'x-id',
]);

const unescapeXml = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** The IAM actions and resources of one request. */
export function describeRequest(a: Account, request: AwsRequest): Described {
  if (request.service === 's3') return s3(request);
  const op = targetOperation(request.headers);
  if (!op)
    return { operation: `${request.method} ${request.url}`, authorizations: [{ action: `${request.service}:Unknown`, resource: '*' }] };
  const body = (request.body.length ? JSON.parse(request.body.toString('utf8')) : {}) as Json;
  const by: Record<string, () => Authorization[]> = {
    dynamodb: () => dynamodb(a, op, body),
    sqs: () => sqs(a, op, body),
    rekognition: () => rekognition(op, body),
    events: () => events(a, op, body),
  };
  const authorizations = by[request.service]?.() ?? [{ action: `${request.service}:${op}`, resource: '*' }];
  return { operation: op, authorizations };
}
