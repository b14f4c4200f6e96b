// The local S3: s3rver on loopback with the project's bucket, persisting under <dataDir>/s3. It refuses what S3
// refuses, or what it cannot store, with S3's XML errors (object-keys.ts), answers only signed requests, presigned URLs and
// POST forms (auth.ts), checks presigned POST forms and conditional requests (requests.ts), and never lets a
// failed write take the process down (store.ts).

import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { CreatedObject } from '../../lib/reconcile/s3-event';
import { LOCAL_NAMES } from '../contract';
import { isOutOfSpace } from '../disk-space';
import { functionCredentials, functionOfAccessKey, type LocalIam } from '../iam/iam';
import { dropConnections } from '../listen';
import { ClientS3KeyRing, clientS3KeysFile } from './client-key-ring';
import { s3FormAuthorizer, s3IamGuard } from './iam';
import { objectName } from './key-locks';
import { multipartKeyGuard } from './multipart';
import { conditionalRequests, keyGuard, postFormGuard, requestTarget, type S3RequestContext, signatureGuard } from './requests';
import { type FilesystemStore, S3Error } from './s3rver-store';
import { decodeCopySource, hardenStore, storedETag } from './store';

/** A client of the local S3 at `endpoint`, whatever process.env holds (its account's keys, path-style requests). */
export function localS3Client(endpoint: string, overrides: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    endpoint,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...overrides,
  });
}

/** What s3rver emits on 'event' (its own, AWS-unlike S3 event: raw key, version 2.0). */
export interface S3rverEvent {
  Records: {
    eventName: string;
    eventTime: string;
    requestParameters: { sourceIPAddress: string };
    s3: {
      bucket: { name: string };
      object: { key: string; size?: number; eTag?: string; sequencer: string };
    };
  }[];
}

/** One object change, as the bridge needs it: a created object as a notification describes it, or a deletion. */
export interface LocalObjectEvent extends Omit<CreatedObject, 'operation'> {
  operation: CreatedObject['operation'] | 'Delete';
}

type KoaContext = S3RequestContext;
interface S3rverInstance extends EventEmitter {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
  store: FilesystemStore;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
interface S3rverAccount {
  accessKeys: Map<string, string>;
  createKeyPair(accessKeyId: string, secretAccessKey: string): void;
}

// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as S3rverConstructor;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const accountModel = require('s3rver/lib/models/account') as { registry: Map<string, S3rverAccount>; DUMMY_ACCOUNT: S3rverAccount };
const accounts = accountModel.registry;
/** The operator's secret (S3RVER/S3RVER, s3rver's own account), as s3rver's own header checks use it. */
const operatorSecret = (accessKeyId: string): string | undefined =>
  accessKeyId === LOCAL_NAMES.accessKeyId ? accounts.get(accessKeyId)?.accessKeys.get(accessKeyId) : undefined;
/** A function's own key (local/iam/iam.ts), made known to s3rver's own signature checks as a client's is. */
const functionSecret = (accessKeyId: string): string | undefined => {
  const fn = functionOfAccessKey(accessKeyId);
  if (fn === undefined) return undefined;
  const { secretAccessKey } = functionCredentials(fn);
  knownToS3rver(accessKeyId, secretAccessKey);
  return secretAccessKey;
};
/** Makes a client's key known to s3rver's own signature checks, which run after ours. */
const knownToS3rver = (accessKeyId: string, secret: string): void => {
  if (accountModel.DUMMY_ACCOUNT.accessKeys.get(accessKeyId) !== secret) accountModel.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secret);
};

export interface LocalS3Options {
  host: string;
  port: number;
  dataDir: string;
  bucket?: string;
  silent?: boolean;
  /** Told of each write refused for lack of space (answered InternalError); without it, such faults are logged. */
  onWriteFault?: (err: unknown) => void;
  /** The largest file a POST form may carry (the stack's MAX_UPLOAD_BYTES); default S3's own, 5 GiB. */
  maxFormFileBytes?: number;
  /** POST form bodies read at once (default 16); one more answers 503 SlowDown. */
  maxConcurrentForms?: number;
  /** How long a form's fields before its file may take to arrive (default 10 s); then 400 RequestTimeout. */
  formFieldsTimeoutMs?: number;
  /** The functions' roles (local/iam/iam.ts): a request signed with a function's key does only what its role allows. */
  iam?: LocalIam;
}

/** S3's largest single upload (PutObject or a POST form). */
const S3_MAX_SINGLE_UPLOAD_BYTES = 5 * 1024 ** 3;

export interface LocalS3 {
  url: string;
  port: number;
  bucket: string;
  directory: string;
  /**
   * Subscribe to object changes (the bridge turns them into AWS-exact records). Called synchronously
   * while the request that made the change is still open, so an upload's event exists before its answer.
   */
  onObjectEvent(listener: (event: LocalObjectEvent) => void): () => void;
  /** The stored ETag (MD5 hex) of an object. */
  eTagOf(bucket: string, key: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * s3rver encrypts ListObjectsV2 continuation tokens with single DES ('des', i.e. DES-CBC), which OpenSSL 3
 * moved to its legacy provider: without `--openssl-legacy-provider` the second page of any paged listing
 * fails with ERR_OSSL_EVP_UNSUPPORTED. Three-key DES-EDE3-CBC with K1 = K2 = K3 is, by construction,
 * exactly single DES and is in OpenSSL's default provider, so 'des' is mapped to it: tokens are
 * byte-identical, and no process (npm start, jest workers, benches) needs a Node flag.
 */
export function enableSingleDesForS3rver(): void {
  if (singleDesSupported()) return;
  const marker = Symbol.for('icecat.singleDes');
  const patched = crypto as unknown as Record<symbol, boolean>;
  if (patched[marker]) return;
  const { createCipheriv, createDecipheriv } = crypto;
  const asTripleDes = (key: crypto.CipherKey): Buffer => {
    const k = Buffer.from(key as Buffer);
    return Buffer.concat([k, k, k]);
  };
  const c = crypto as unknown as {
    createCipheriv: (...args: unknown[]) => unknown;
    createDecipheriv: (...args: unknown[]) => unknown;
  };
  c.createCipheriv = (algorithm: unknown, key: unknown, iv: unknown, options?: unknown) =>
    algorithm === 'des'
      ? createCipheriv('des-ede3-cbc', asTripleDes(key as Buffer), iv as Buffer)
      : (createCipheriv as (...a: unknown[]) => unknown)(algorithm, key, iv, options);
  c.createDecipheriv = (algorithm: unknown, key: unknown, iv: unknown, options?: unknown) =>
    algorithm === 'des'
      ? createDecipheriv('des-ede3-cbc', asTripleDes(key as Buffer), iv as Buffer)
      : (createDecipheriv as (...a: unknown[]) => unknown)(algorithm, key, iv, options);
  patched[marker] = true;
}

function singleDesSupported(): boolean {
  try {
    crypto.createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
}

/**
 * s3rver emits multipart completions as 'Post', as it does POST form uploads: the objects whose multipart upload a
 * request is completing tell them apart (counted per object while the request runs; not an AsyncLocalStorage, see
 * KeyLocks). A form POST to the very key being completed at that moment would be named a completion too.
 */
function trackMultipartCompletions(server: InstanceType<S3rverConstructor>): ReadonlyMap<string, number> {
  const completing = new Map<string, number>();
  server.middleware.unshift(async (ctx, next) => {
    const target = ctx.method === 'POST' && ctx.query.uploadId !== undefined ? requestTarget(ctx.path) : undefined;
    if (!target?.key) return next();
    const name = objectName(target.bucket, target.key);
    completing.set(name, (completing.get(name) ?? 0) + 1);
    try {
      await next();
    } finally {
      const left = (completing.get(name) ?? 1) - 1;
      if (left > 0) completing.set(name, left);
      else completing.delete(name);
    }
  });
  return completing;
}

/** The secret of each access key the local S3 knows (the operator's, the functions', the clients'), and its client. */
function signingKeys(opts: LocalS3Options): {
  secretFor: (accessKeyId: string) => string | undefined;
  clientOf: (accessKeyId: string) => string | undefined;
} {
  // The clients' own keys (client-key-ring.ts): SigV4 only (s3rver's SigV2 checks know the operator's key alone).
  const clientKeys = new ClientS3KeyRing(clientS3KeysFile(opts.dataDir));
  const clientSecret = (accessKeyId: string): string | undefined => {
    const key = clientKeys.lookup(accessKeyId);
    if (key) knownToS3rver(accessKeyId, key.secretAccessKey);
    return key?.secretAccessKey;
  };
  const secretFor = (accessKeyId: string): string | undefined =>
    operatorSecret(accessKeyId) ?? (opts.iam ? functionSecret(accessKeyId) : undefined) ?? clientSecret(accessKeyId);
  const clientOf = (accessKeyId: string): string | undefined =>
    operatorSecret(accessKeyId) ? undefined : clientKeys.lookup(accessKeyId)?.clientId;
  return { secretFor, clientOf };
}

export async function startLocalS3(opts: LocalS3Options): Promise<LocalS3> {
  enableSingleDesForS3rver();
  const bucket = opts.bucket ?? LOCAL_NAMES.bucket;
  const silent = opts.silent ?? true;
  const directory = path.join(opts.dataDir, 's3');
  const server = new S3rver({
    address: opts.host,
    port: opts.port,
    directory,
    silent,
    // Path-style only: virtual-host detection would treat a hostname like "localhost.localdomain" as a bucket.
    vhostBuckets: false,
    configureBuckets: [{ name: bucket }],
  });
  // Silent, s3rver's request logger (koa-logger) still formats a line for every request and response into a silent
  // winston transport, and pipes every streamed body (each GetObject) through a byte counter for that line.
  if (silent) dropRequestLogger(server);
  const locks = hardenStore(server.store);
  const { secretFor, clientOf } = signingKeys(opts);
  // In array order: the request context, the copy-source rewrite, the key check, the POST form check, the
  // multipart upload's key, the conditions, then s3rver's own.
  server.middleware.unshift(conditionalRequests(server.store, locks));
  server.middleware.unshift(multipartKeyGuard(server.store));
  server.middleware.unshift(
    postFormGuard(secretFor, {
      maxFileBytes: opts.maxFormFileBytes ?? S3_MAX_SINGLE_UPLOAD_BYTES,
      maxConcurrentForms: opts.maxConcurrentForms ?? 16,
      clientOf,
      fieldsTimeoutMs: opts.formFieldsTimeoutMs,
      ...(opts.iam ? { authorizeForm: s3FormAuthorizer(opts.iam) } : {}),
    }),
  );
  server.middleware.unshift(keyGuard);
  server.middleware.unshift((ctx, next) => {
    const source = ctx.headers['x-amz-copy-source'];
    if (typeof source === 'string') ctx.headers['x-amz-copy-source'] = copySourceForS3rver(source);
    return next();
  });
  const completing = trackMultipartCompletions(server);
  server.middleware.unshift(outOfSpaceAnswers(opts.onWriteFault));
  // Once the signature is checked: a function's request, only as far as its role allows (iam.ts).
  if (opts.iam) server.middleware.unshift(s3IamGuard(opts.iam) as (typeof server.middleware)[number]);
  // Before anything reads or rewrites the request: only signed requests, presigned URLs and POST forms go on.
  server.middleware.unshift(signatureGuard(secretFor, clientOf));
  // Koa's default error listener prints every failed request; keep only server faults, silent or not: a fault of the
  // local S3 is a bug to see, and its cause is nowhere else.
  // SlowDown (too many forms at once) and a client gone mid-request are not faults.
  server.on('error', (err: Error & { status?: number; code?: string }) => {
    if (err.code === 'SlowDown' || /HPE_INVALID_EOF_STATE|ECONNRESET|aborted/.test(err.message)) return;
    if ((err.status ?? 500) >= 500 && !(opts.onWriteFault && err instanceof S3OutOfSpaceError)) console.error('[s3] request failed:', err);
  });
  const address = await server.run();
  const url = `http://${opts.host}:${address.port}`;
  return {
    url,
    port: address.port,
    bucket,
    directory,
    onObjectEvent(listener) {
      const onEvent = (event: S3rverEvent) => {
        for (const record of event.Records)
          listener(toObjectEvent(record, completing.has(objectName(record.s3.bucket.name, record.s3.object.key))));
      };
      server.on('event', onEvent);
      return () => server.off('event', onEvent);
    },
    eTagOf: (bucketName, key) => storedETag(server.store, bucketName, key),
    async close() {
      const http = server.httpServer;
      const closing = server.close();
      if (http) dropConnections(http);
      await closing;
    },
  };
}

/**
 * Removes s3rver's request logger (koa-logger's middleware, named `logger`, the first s3rver adds) from a server that
 * is to log nothing. Its winston logger (app.logger, s3rver's own warnings) stays, silent as configured.
 */
export function dropRequestLogger(server: { middleware: { name: string }[] }): boolean {
  const at = server.middleware.findIndex((fn) => fn.name === 'logger');
  if (at === -1) return false;
  server.middleware.splice(at, 1);
  return true;
}

/** The answer to a write the local S3 could not make for lack of space: S3's InternalError, which clients retry. */
class S3OutOfSpaceError extends S3Error {
  override readonly cause: unknown;
  constructor(message: string, options: { cause: unknown }) {
    super('InternalError', message);
    this.cause = options.cause;
  }
}

const OUT_OF_SPACE_MESSAGE =
  'We encountered an internal error. Please try again. (The local S3 is out of disk space: the write was not made.)';

/** Answers a write that met a full disk (ENOSPC) with S3's InternalError saying so, and reports it. */
function outOfSpaceAnswers(
  onWriteFault: ((err: unknown) => void) | undefined,
): (ctx: KoaContext, next: () => Promise<void>) => Promise<void> {
  return async (_ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!isOutOfSpace(err)) throw err;
      onWriteFault?.(err);
      throw new S3OutOfSpaceError(OUT_OF_SPACE_MESSAGE, { cause: err });
    }
  };
}

/**
 * s3rver reads x-amz-copy-source with decodeURI, which leaves %2B, %26, %3D, %2C, %3A, %3B, %3F, %40, %23 and
 * %24 encoded: copying a key holding '+', '&', '=', … answers NoSuchKey. The header is rewritten so that
 * decodeURI yields the real "bucket/key" (S3 itself URL-decodes it fully); a ?versionId suffix is dropped,
 * as s3rver keeps no versions.
 */
export function copySourceForS3rver(header: string): string {
  const decoded = decodeCopySource(header);
  return decoded === undefined ? header : encodeURI(decoded);
}

function toObjectEvent(record: S3rverEvent['Records'][number], completingMultipart: boolean): LocalObjectEvent {
  const [, kind = ''] = record.eventName.split(':');
  const operation = kind === 'Post' && completingMultipart ? 'CompleteMultipartUpload' : (kind as LocalObjectEvent['operation']);
  return {
    operation,
    bucket: record.s3.bucket.name,
    key: record.s3.object.key,
    size: Number(record.s3.object.size ?? 0),
    eTag: record.s3.object.eTag,
    sourceIp: record.requestParameters.sourceIPAddress.replace(/^::ffff:/, ''),
    time: new Date(record.eventTime),
  };
}
