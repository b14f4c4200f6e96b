// The local S3's IAM: a request signed (or presigned) with a function's key (local/iam/iam.ts) goes on only when that
// function's role allows what S3 authorizes it as, on the ARNs S3 names (arn:aws:s3:::bucket for bucket operations,
// arn:aws:s3:::bucket/key for objects), with the condition keys S3 sets (s3:prefix on a listing); else 403
// AccessDenied. A copy is a GetObject of its source as well as a PutObject of its target; DeleteObjects authorizes
// each key and answers the refused ones in its result, as S3 does. The operator's and the clients' own keys keep
// their scopes (requests.ts signatureGuard, scope.ts). Runs once the signature has been checked.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { IamRequest } from '../iam/evaluate';
import { functionOfAccessKey, type LocalIam } from '../iam/iam';
import { signedAccessKeyId } from './auth';
import { requestTarget, type S3RequestContext } from './requests';
import { S3Error } from './s3rver-store';
import { decodeCopySource } from './store';

/** Koa's context as this guard uses it: the request, and the answer it may write itself. */
type Ctx = S3RequestContext & { req: IncomingMessage; type?: string; body?: unknown };
type Middleware = (ctx: Ctx, next: () => Promise<void>) => Promise<void>;

const objectArn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;
const bucketArn = (bucket: string) => `arn:aws:s3:::${bucket}`;

/** The action a bucket-level request is authorized as, and its condition keys. */
function bucketRequest(method: string, bucket: string, query: Record<string, unknown>): IamRequest {
  const has = (name: string) => query[name] !== undefined;
  const resource = bucketArn(bucket);
  if (method === 'GET' && has('uploads')) return { action: 's3:ListBucketMultipartUploads', resource };
  if (method === 'GET' && has('versions')) return { action: 's3:ListBucketVersions', resource };
  if (method === 'GET' && has('location')) return { action: 's3:GetBucketLocation', resource };
  if ((method === 'GET' || method === 'HEAD') && !['cors', 'lifecycle', 'policy', 'acl', 'website', 'tagging'].some(has)) {
    const context: Record<string, string> = { 's3:prefix': typeof query.prefix === 'string' ? query.prefix : '' };
    if (typeof query.delimiter === 'string') context['s3:delimiter'] = query.delimiter;
    if (typeof query['max-keys'] === 'string') context['s3:max-keys'] = query['max-keys'];
    return { action: 's3:ListBucket', resource, context };
  }
  // Bucket configuration: no function's code sends it, and no role grants it.
  return { action: 's3:PutBucketPolicy', resource };
}

/** What an object-level request is authorized as (one or two requests: a copy reads its source too). */
export function s3IamRequests(ctx: Pick<S3RequestContext, 'method' | 'path' | 'query' | 'headers'>): IamRequest[] | undefined {
  const target = requestTarget(ctx.path);
  if (!target) return undefined;
  const query = ctx.query as Record<string, unknown>;
  if (!target.key) return [bucketRequest(ctx.method, target.bucket, query)];
  const resource = objectArn(target.bucket, target.key);
  const has = (name: string) => query[name] !== undefined;
  switch (ctx.method) {
    case 'GET':
    case 'HEAD':
      if (has('uploadId')) return [{ action: 's3:ListMultipartUploadParts', resource }];
      if (has('tagging')) return [{ action: 's3:GetObjectTagging', resource }];
      return [{ action: 's3:GetObject', resource }];
    case 'PUT': {
      if (has('tagging')) return [{ action: 's3:PutObjectTagging', resource }];
      const source = ctx.headers['x-amz-copy-source'];
      const copied = typeof source === 'string' ? decodeCopySource(source)?.replace(/^\//, '') : undefined;
      const read = copied ? [{ action: 's3:GetObject', resource: `arn:aws:s3:::${copied}` }] : [];
      return [{ action: 's3:PutObject', resource }, ...read];
    }
    case 'POST':
      return [{ action: 's3:PutObject', resource }];
    case 'DELETE':
      return [{ action: has('uploadId') ? 's3:AbortMultipartUpload' : 's3:DeleteObject', resource }];
    default:
      return undefined;
  }
}

const unescapeXml = (text: string) =>
  text.replace(/&(lt|gt|amp|quot|apos|#(\d+)|#x([0-9a-f]+));/gi, (whole, name: string, dec?: string, hex?: string) => {
    if (dec) return String.fromCodePoint(Number(dec));
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    return { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }[name.toLowerCase()] ?? whole;
  });
const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** DeleteObjects: each key authorized as s3:DeleteObject; the refused ones answered as errors in its result. */
async function guardDeleteObjects(ctx: Ctx, next: () => Promise<void>, iam: LocalIam, fn: string, bucket: string): Promise<void> {
  const xml = (await readAll(ctx.req)).toString('utf8');
  const objects = [...xml.matchAll(/<Object>([\s\S]*?)<\/Object>/g)].map((m) => m[1] as string);
  const refused: string[] = [];
  const kept: string[] = [];
  for (const object of objects) {
    const key = unescapeXml(/<Key>([\s\S]*?)<\/Key>/.exec(object)?.[1] ?? '');
    const denied = await iam.refusal(fn, [{ action: 's3:DeleteObject', resource: objectArn(bucket, key) }]);
    (denied ? refused : kept).push(denied ? key : object);
  }
  const errors = refused
    .map((key) => `<Error><Key>${escapeXml(key)}</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
    .join('');
  if (kept.length === 0 && objects.length > 0) {
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${errors}</DeleteResult>`;
    return;
  }
  const body = refused.length === 0 ? xml : xml.replace(/<Object>[\s\S]*<\/Object>/, kept.map((o) => `<Object>${o}</Object>`).join(''));
  (ctx as { req: unknown }).req = Object.assign(Readable.from([Buffer.from(body)]), {
    headers: ctx.req.headers,
    method: ctx.req.method,
    url: ctx.req.url,
  });
  await next();
  if (errors && typeof ctx.body === 'string') ctx.body = ctx.body.replace('</DeleteResult>', `${errors}</DeleteResult>`);
}

/** Refuses, as S3 does, what a function's role does not allow (after the signature check, before anything else). */
export function s3IamGuard(iam: LocalIam): Middleware {
  return async (ctx, next) => {
    const fn = functionOfAccessKey(signedAccessKeyId({ method: ctx.method, url: ctx.req.url ?? ctx.path, headers: ctx.headers }));
    if (fn === undefined || ctx.method === 'OPTIONS') return next();
    const target = requestTarget(ctx.path);
    if (ctx.method === 'POST' && target && !target.key && ctx.query.delete !== undefined) {
      return guardDeleteObjects(ctx, next, iam, fn, target.bucket);
    }
    // A POST form is authorized by its policy's signer, once its fields are read (s3FormAuthorizer).
    if (ctx.method === 'POST' && target && !target.key) return next();
    const requests = s3IamRequests(ctx);
    if (!requests || (await iam.refusal(fn, requests))) throw new S3Error('AccessDenied', 'Access Denied');
    return next();
  };
}

/** A POST form's upload, authorized as s3:PutObject on its key for the function whose key signed its policy. */
export function s3FormAuthorizer(iam: LocalIam): (accessKeyId: string | undefined, bucket: string, key: string) => Promise<boolean> {
  return async (accessKeyId, bucket, key) => {
    const fn = functionOfAccessKey(accessKeyId);
    return fn === undefined || !(await iam.refusal(fn, [{ action: 's3:PutObject', resource: objectArn(bucket, key) }]));
  };
}
