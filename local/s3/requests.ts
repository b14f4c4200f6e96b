// Koa middlewares in front of s3rver's routes for what s3rver does not check: presigned POST forms (their policy,
// signature and size) and conditional requests (If-Match on GET/HEAD/PUT/DELETE, If-None-Match on PUT,
// x-amz-copy-source-if-match / -if-none-match on CopyObject).
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { authRefusal, signedAccessKeyId, sigV2AccessKeyId } from './auth';
import { formBodyForS3rver } from './form-body';
import { canonicalContentType, formBoundary, MAX_PRE_DATA_BYTES } from './form-prefix';
import { discardBody, malformed, readPrefix, sizeCheckedStore } from './form-upload';
import { objectName } from './key-locks';
import { keyRefusal } from './object-keys';
import { policySizeRange, postPolicyRefusal, sizeRefusal } from './post-policy';
import { type FilesystemStore, S3Error, type S3ErrorInstance, s3Error } from './s3rver-store';
import { clientPrefix, clientScopeRefusal } from './scope';
import { decodeCopySource, type StoreLocks, storedETag } from './store';

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
 * Refuses what S3 refuses to a bucket that is not public (auth.ts): a request without a valid SigV4 signature (its
 * Authorization header or a presigned URL's query) that is not a browser-based upload form or a CORS preflight. Runs
 * first, on the request as it arrived (raw path and query, headers not yet rewritten).
 */
export function signatureGuard(secretFor: (accessKeyId: string) => string | undefined, clientOf: ClientOf = () => undefined): Middleware {
  return async (ctx, next) => {
    const req = ctx.req as IncomingMessage;
    const signed = { method: ctx.method, url: req.url ?? ctx.path, headers: ctx.headers };
    const refusal = authRefusal(signed, { now: new Date(), secretFor });
    if (refusal) throw s3Error(refusal);
    // A client's own key signs SigV4 only (s3rver, which checks SigV2 itself, would not scope it)...
    const v2AccessKeyId = sigV2AccessKeyId(signed);
    if (v2AccessKeyId !== undefined && clientOf(v2AccessKeyId) !== undefined) throw new S3Error('AccessDenied', 'Access Denied');
    // ...and does what its policy allows, nothing else (scope.ts); the operator's key does everything.
    const accessKeyId = signedAccessKeyId(signed);
    const clientId = accessKeyId === undefined ? undefined : clientOf(accessKeyId);
    const outOfScope = clientId === undefined ? undefined : clientScopeRefusal(signed, clientId);
    if (outOfScope) throw s3Error(outOfScope);
    return next();
  };
}

/** The client an access key belongs to, undefined for the operator's key (or none). */
export type ClientOf = (accessKeyId: string) => string | undefined;

export interface FormGuardOptions {
  /** The largest file any form may carry: a body declaring more (with the fields' allowance) is refused unread. */
  maxFileBytes: number;
  /** Form bodies read at once; one more is answered 503 SlowDown. */
  maxConcurrentForms: number;
  /** The client whose own key signed a form: its key must then be under the client's prefix. */
  clientOf?: ClientOf;
  /** How long the fields before the file may take to arrive (a stalled form would hold its slot): 400 RequestTimeout. */
  fieldsTimeoutMs?: number;
  /** Whether the key that signed the form's policy may put its key (a function's role, iam.ts); else AccessDenied. */
  authorizeForm?: (accessKeyId: string | undefined, bucket: string, key: string) => Promise<boolean>;
}

/** Room for the closing boundary and the fields after the file (S3 ignores them), beyond the fields before it. */
const FORM_TAIL_BYTES = MAX_PRE_DATA_BYTES;

/**
 * Checks a browser-based upload's form as S3 does, streaming: a Content-Length over the largest allowed file is refused
 * before a byte is read; the fields before the file (at most 20 KB, S3's limit) are read and checked (policy,
 * signature, conditions) before the file; then s3rver reads the same body, the file going to disk as it arrives, and
 * the store refuses it once it leaves the policy's content-length-range. Memory holds at most the fields of each form,
 * and at most `maxConcurrentForms` forms are read at once (one more answers 503 SlowDown, which clients retry).
 */
export function postFormGuard(secretFor: (accessKeyId: string) => string | undefined, opts: FormGuardOptions): Middleware {
  let reading = 0;
  return async (ctx, next) => {
    const target = requestTarget(ctx.path);
    const contentType = headerOf(ctx, 'content-type') ?? '';
    const isFormPost =
      ctx.method === 'POST' &&
      target !== undefined &&
      !target.key &&
      !('delete' in ctx.query) &&
      /^multipart\/form-data\b/i.test(contentType);
    if (!isFormPost) return next();
    const req = ctx.req as IncomingMessage;
    const declared = Number(headerOf(ctx, 'content-length') ?? NaN);
    const refuse = (error: S3ErrorInstance): never => {
      // Answered before the body was read: the rest of it is dropped as it comes, and the connection closed after.
      discardBody(req);
      throw error;
    };
    if (declared > opts.maxFileBytes + MAX_PRE_DATA_BYTES + FORM_TAIL_BYTES) {
      refuse(
        new S3Error('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
          ProposedSize: declared,
          MaxSizeAllowed: opts.maxFileBytes,
        }),
      );
    }
    if (reading >= opts.maxConcurrentForms) refuse(new S3Error('SlowDown', 'Please reduce your request rate.'));
    const boundary = formBoundary(contentType) ?? refuse(malformed());
    reading++;
    try {
      const prefix = await readPrefix(req, boundary, opts.fieldsTimeoutMs ?? 10_000).catch((err: unknown) =>
        refuse(err instanceof S3Error ? err : malformed()),
      );
      if (!prefix.file) {
        refuse(
          new S3Error('InvalidArgument', 'POST requires exactly one file upload per request.', { ArgumentName: 'file', ArgumentValue: 0 }),
        );
      }
      const refusal = postPolicyRefusal({ bucket: target.bucket, fields: prefix.fields }, { now: new Date(), secretFor });
      if (refusal) refuse(s3Error(refusal));
      const scope = formClient(prefix.fields, opts.clientOf);
      const key = prefix.fields.find(([name]) => name.toLowerCase() === 'key')?.[1] ?? '';
      if (scope !== undefined && !key.startsWith(clientPrefix(scope))) refuse(new S3Error('AccessDenied', 'Access Denied'));
      if (opts.authorizeForm && !(await opts.authorizeForm(formSigner(prefix.fields), target.bucket, key)))
        refuse(new S3Error('AccessDenied', 'Access Denied'));
      const range = policySizeRange(prefix.fields);
      const tooLarge =
        range && declared > prefix.received + range.max + FORM_TAIL_BYTES ? sizeRefusal(range, declared - prefix.received) : undefined;
      if (tooLarge) refuse(s3Error(tooLarge));
      // s3rver reads the body from its start: it is handed the fields checked, rewritten in plain parts, then the file
      // and the closing boundary (form-body.ts): it never reads a part header the client wrote.
      ctx.headers['content-type'] = canonicalContentType(boundary);
      ctx.req = formBodyForS3rver(boundary, prefix.fields, prefix.rest, req);
      if (range && ctx.store) ctx.store = sizeCheckedStore(ctx.store, range);
      try {
        await next();
      } catch (err) {
        // Refused while s3rver read it (the file's size, a failed write): what is left is read and dropped.
        discardBody(req);
        throw err;
      }
    } finally {
      reading--;
    }
  };
}

/** The client whose key signed a form's policy (SigV4 or SigV2 fields), undefined for the operator's. */
function formClient(fields: readonly (readonly [string, string])[], clientOf: ClientOf | undefined): string | undefined {
  const accessKeyId = formSigner(fields);
  return accessKeyId === undefined ? undefined : clientOf?.(accessKeyId);
}

/** The access key that signed a form's policy (SigV4 or SigV2 fields). */
function formSigner(fields: readonly (readonly [string, string])[]): string | undefined {
  const field = (name: string) => fields.find(([n]) => n.toLowerCase() === name)?.[1];
  return field('x-amz-credential')?.split('/')[0] ?? field('awsaccesskeyid');
}

/** ETags listed in an If-Match / If-None-Match header, unquoted ("*" stays "*"). */
export function listedETags(header: string): string[] {
  return header
    .split(',')
    .map((t) =>
      t
        .trim()
        .replace(/^W\//, '')
        .replace(/^"(.*)"$/, '$1'),
    )
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
