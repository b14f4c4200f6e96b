// Koa middlewares in front of s3rver's routes for what s3rver does not check: presigned POST forms (their policy,
// signature and size) and conditional requests (If-Match on GET/HEAD/PUT/DELETE, If-None-Match on PUT,
// x-amz-copy-source-if-match / -if-none-match on CopyObject).
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { authRefusal } from './s3-auth';
import { keyRefusal } from './s3-keys';
import { postPolicyRefusal } from './s3-post-policy';
import { decodeCopySource, objectName, S3Error, s3Error, storedETag, type FilesystemStore, type StoreLocks } from './s3-store';

export interface S3RequestContext {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  req: IncomingMessage | Readable;
  /** s3rver's store, as its controllers reach it (Koa's app context; a request may shadow it with its own view). */
  store?: FilesystemStore;
}
export type Middleware = (ctx: S3RequestContext, next: () => Promise<void>) => Promise<void>;

/** The local S3 keeps POST bodies in memory to check them before s3rver stores the file. */
const POST_BODY_LIMIT_BYTES = 256 * 1024 * 1024;

interface ObjectTarget {
  bucket: string;
  key?: string;
}

/** Bucket and key of a path-style request, decoded as s3rver's router decodes them. */
export function requestTarget(requestPath: string): ObjectTarget | undefined {
  const match = /^\/([^/]+)(?:\/(.*))?$/.exec(requestPath);
  if (!match) return undefined;
  try {
    const bucket = decodeURIComponent(match[1] ?? '');
    const key = match[2] ? decodeURIComponent(match[2]) : undefined;
    return { bucket, key };
  } catch {
    return undefined;
  }
}

/** "bucket/key" of an x-amz-copy-source header (URL-encoded, optional leading '/', optional ?versionId). */
export function copySourceTarget(header: string): Required<ObjectTarget> | undefined {
  const source = decodeCopySource(header);
  if (source === undefined) return undefined;
  const trimmed = source.replace(/^\//, '');
  const slash = trimmed.indexOf('/');
  if (slash === -1) return undefined;
  return { bucket: trimmed.slice(0, slash), key: trimmed.slice(slash + 1) };
}

/**
 * Refuses a key in the request path that the local S3 cannot store before s3rver's router sees it: the router does
 * not match keys with empty segments ("//", a leading "/") and would answer a bare 404.
 */
export const keyGuard: Middleware = async (ctx, next) => {
  const target = requestTarget(ctx.path);
  const refusal = target?.key ? keyRefusal(target.key) : undefined;
  if (refusal) throw s3Error(refusal);
  return next();
};

const headerOf = (ctx: S3RequestContext, name: string): string | undefined => {
  const value = ctx.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Refuses what S3 refuses to a bucket that is not public (s3-auth.ts): a request without a valid SigV4 signature (its
 * Authorization header or a presigned URL's query) that is not a browser-based upload form or a CORS preflight. Runs
 * first, on the request as it arrived (raw path and query, headers not yet rewritten).
 */
export function signatureGuard(secretFor: (accessKeyId: string) => string | undefined): Middleware {
  return async (ctx, next) => {
    const req = ctx.req as IncomingMessage;
    const refusal = authRefusal({ method: ctx.method, url: req.url ?? ctx.path, headers: ctx.headers }, { now: new Date(), secretFor });
    if (refusal) throw s3Error(refusal);
    return next();
  };
}

/** Checks a browser-based upload's form as S3 does, then hands s3rver the same body. */
export function postFormGuard(secretFor: (accessKeyId: string) => string | undefined): Middleware {
  return async (ctx, next) => {
    const target = requestTarget(ctx.path);
    const contentType = headerOf(ctx, 'content-type') ?? '';
    const isFormPost =
      ctx.method === 'POST' && target !== undefined && !target.key && !('delete' in ctx.query) && /^multipart\/form-data\b/i.test(contentType);
    if (!isFormPost) return next();

    const body = await readBody(ctx.req);
    let form: FormData;
    try {
      form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    } catch {
      throw new S3Error('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');
    }
    const fields: [string, string][] = [];
    let fileSize: number | undefined;
    // S3 ignores every field after the file.
    for (const [name, value] of form.entries()) {
      if (name === 'file') {
        fileSize = typeof value === 'string' ? Buffer.byteLength(value) : value.size;
        break;
      }
      if (typeof value === 'string') fields.push([name, value]);
    }
    if (fileSize === undefined) {
      throw new S3Error('InvalidArgument', 'POST requires exactly one file upload per request.', { ArgumentName: 'file', ArgumentValue: 0 });
    }
    const refusal = postPolicyRefusal({ bucket: target.bucket, fields, fileSize }, { now: new Date(), secretFor });
    if (refusal) throw s3Error(refusal);
    ctx.req = Readable.from([body], { objectMode: false });
    return next();
  };
}

function readBody(req: IncomingMessage | Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= POST_BODY_LIMIT_BYTES) chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      if (size > POST_BODY_LIMIT_BYTES) {
        reject(
          new S3Error('EntityTooLarge', `Your proposed upload exceeds the local S3's POST limit of ${POST_BODY_LIMIT_BYTES} bytes`, {
            ProposedSize: size,
            MaxSizeAllowed: POST_BODY_LIMIT_BYTES,
          }),
        );
      } else resolve(Buffer.concat(chunks));
    });
  });
}

/** ETags listed in an If-Match / If-None-Match header, unquoted ("*" stays "*"). */
export function listedETags(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'))
    .filter((t) => t !== '');
}

const preconditionFailed = (condition: string) =>
  new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { Condition: condition });
const noSuchKey = (key: string) => new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: key });

interface Precondition {
  target: Required<ObjectTarget>;
  header: string;
  value: string;
  /** Whether the condition holds when the object is missing; undefined: a missing object answers NoSuchKey. */
  whenMissing?: boolean;
  holds(eTag: string): boolean;
}

/** The preconditions a request carries, in the order S3 evaluates them. */
function preconditionsOf(ctx: S3RequestContext, target: Required<ObjectTarget>): Precondition[] {
  const found: Precondition[] = [];
  const matches = (value: string) => (eTag: string) => listedETags(value).some((t) => t === '*' || t === eTag);
  const copySource = headerOf(ctx, 'x-amz-copy-source');
  const ifMatch = headerOf(ctx, 'if-match');
  const ifNoneMatch = headerOf(ctx, 'if-none-match');
  if (ctx.method === 'PUT' && copySource !== undefined) {
    const source = copySourceTarget(copySource);
    const sourceIfMatch = headerOf(ctx, 'x-amz-copy-source-if-match');
    const sourceIfNoneMatch = headerOf(ctx, 'x-amz-copy-source-if-none-match');
    if (source && sourceIfMatch !== undefined) {
      found.push({ target: source, header: 'x-amz-copy-source-If-Match', value: sourceIfMatch, holds: matches(sourceIfMatch) });
    }
    if (source && sourceIfNoneMatch !== undefined) {
      const hit = matches(sourceIfNoneMatch);
      found.push({ target: source, header: 'x-amz-copy-source-If-None-Match', value: sourceIfNoneMatch, holds: (e) => !hit(e) });
    }
  }
  const conditionalWrite = ctx.method === 'PUT' || ctx.method === 'DELETE' || ctx.method === 'GET' || ctx.method === 'HEAD';
  if (conditionalWrite && ifMatch !== undefined) {
    found.push({ target, header: 'If-Match', value: ifMatch, holds: matches(ifMatch) });
  }
  // GET/HEAD If-None-Match (304) is s3rver's own; on a write it asks that the key be free.
  if (ctx.method === 'PUT' && ifNoneMatch !== undefined) {
    const hit = matches(ifNoneMatch);
    found.push({ target, header: 'If-None-Match', value: ifNoneMatch, whenMissing: true, holds: (e) => !hit(e) });
  }
  return found;
}

/**
 * Answers 412 PreconditionFailed (or 404 NoSuchKey when an If-Match names a missing object) as S3 does, holding the
 * objects' locks from the check through s3rver's action so that no other write slips in between: the action reaches
 * the store through `ctx.store`, here the view that knows this request holds them.
 */
export function conditionalRequests(store: FilesystemStore, locks: StoreLocks): Middleware {
  const eTagOf = async (target: Required<ObjectTarget>): Promise<string | undefined> => {
    try {
      return await storedETag(store, target.bucket, target.key);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
  return async (ctx, next) => {
    const target = requestTarget(ctx.path);
    if (!target?.key || Object.keys(ctx.query).some((q) => q !== 'versionId' && q !== 'x-id')) return next();
    const preconditions = preconditionsOf(ctx, { bucket: target.bucket, key: target.key });
    if (preconditions.length === 0) return next();
    const names = [target, ...preconditions.map((p) => p.target)].map((t) => objectName(t.bucket, t.key ?? ''));
    await locks.with(names, async (holding) => {
      for (const precondition of preconditions) {
        const eTag = await eTagOf(precondition.target);
        if (eTag === undefined) {
          if (precondition.whenMissing === undefined) throw noSuchKey(precondition.target.key);
          if (!precondition.whenMissing) throw preconditionFailed(precondition.header);
        } else if (!precondition.holds(eTag)) {
          throw preconditionFailed(precondition.header);
        }
      }
      ctx.store = holding;
      try {
        await next();
      } finally {
        delete ctx.store; // back to the app's store
      }
    });
  };
}
