// The ingest's S3 adapter: read an upload once into one buffer, with the ETag that names this very upload, and move
// it to where it rests by that ETag (copy, then delete), so a newer upload to the same key is never moved or deleted
// in its place.
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { IceCatError } from '../errors';
import { RejectedUploadError } from './errors';

/** The object is no longer under uploads/: an earlier delivery of the same event already moved it. */
export class UploadGoneError extends IceCatError {
  override name = 'UploadGoneError';
  readonly code: string = 'upload_gone';
}

export interface StoredObject {
  bucket: string;
  key: string;
  /** ETag without quotes, as S3 events carry it. */
  etag?: string;
  bytes?: Buffer;
}

export const tooLarge = (bytes: number, maxBytes: number): RejectedUploadError =>
  new RejectedUploadError(`the file is ${bytes} bytes, above the limit of ${maxBytes}`, { code: 'FileTooLarge' });

const unquote = (etag: string | undefined): string | undefined => etag?.replace(/^"|"$/g, '');

const named = (err: unknown, ...names: string[]): boolean => names.includes((err as { name?: string }).name ?? '');
const preconditionFailed = (err: unknown): boolean =>
  named(err, 'PreconditionFailed') || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 412);

/**
 * Streams the object into a single buffer sized from Content-Length (no second copy), refusing anything over the
 * cap before reading it. Answers the bytes with the ETag of the object they came from.
 */
export async function readUpload(s3: S3Client, bucket: string, key: string, maxBytes: number): Promise<StoredObject & { bytes: Buffer }> {
  let out;
  try {
    out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    if (err instanceof NoSuchKey || named(err, 'NoSuchKey'))
      throw new UploadGoneError(`s3://${bucket}/${key} no longer exists`, { cause: err });
    throw err;
  }
  return { bucket, key, ...(await bufferBody(out, `s3://${bucket}/${key}`, maxBytes)) };
}

/** A GetObject's body into one buffer sized from Content-Length, refused over the cap before it is read; its ETag. */
export async function bufferBody(
  out: { Body?: unknown; ContentLength?: number; ETag?: string },
  where: string,
  maxBytes: number,
): Promise<{ etag: string | undefined; bytes: Buffer }> {
  const body = out.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
  const length = out.ContentLength ?? 0;
  if (length > maxBytes) {
    body.destroy?.();
    throw tooLarge(length, maxBytes);
  }
  if (length === 0) {
    body.destroy?.();
    throw new RejectedUploadError('the file is empty (0 bytes)', { code: 'EmptyFile' });
  }
  const buffer = Buffer.allocUnsafe(length);
  let offset = 0;
  for await (const chunk of body) {
    if (offset + chunk.length > length) {
      body.destroy?.();
      throw new Error(`${where} sent more bytes than its Content-Length`);
    }
    buffer.set(chunk, offset);
    offset += chunk.length;
  }
  if (offset !== length) throw new Error(`${where} ended after ${offset} of ${length} bytes`);
  return { etag: unquote(out.ETag), bytes: buffer };
}

/**
 * Stores a thumbnail (WebP). The key holds the same bytes whoever writes it (same pixels, same encoder), so a
 * redelivery simply writes it again; browsers may keep it as long as they like.
 */
export async function storeThumbnail(s3: S3Client, bucket: string, key: string, webp: Buffer): Promise<void> {
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: webp,
      ContentType: 'image/webp',
      CacheControl: 'private, max-age=86400, immutable',
    }),
  );
}

const copySource = (bucket: string, key: string): string => `${bucket}/${encodeURIComponent(key).replace(/%2F/g, '/')}`;

/**
 * Copy then delete, both only while the key still holds this upload (its ETag): the object is never absent from
 * both places. For an upload nothing records (a refusal); the pipeline puts its record between the two steps.
 */
export async function moveUpload(s3: S3Client, upload: StoredObject, to: string): Promise<void> {
  if ((await restCopy(s3, upload, to)).fromSource) await removeUpload(s3, upload);
}

/** What the first half of a move left. */
interface RestCopy {
  /** The resting key holds the upload: copied, written from the bytes held, or by an earlier delivery. */
  rests: boolean;
  /** Copied from a source that is still this upload: to delete once the copy is recorded. */
  fromSource: boolean;
}

/**
 * The first half of a move: the upload copied to where it rests, only while its key still holds it (its ETag). When
 * the key was overwritten since it was read, the bytes held are written instead, and the newer object stays for its
 * own event. Idempotent: copying again writes the same key.
 */
export async function restCopy(s3: S3Client, upload: StoredObject, to: string): Promise<RestCopy> {
  const { bucket, key, etag } = upload;
  try {
    await s3.send(
      new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: copySource(bucket, key), ...(etag ? { CopySourceIfMatch: etag } : {}) }),
    );
    return { rests: true, fromSource: true };
  } catch (err) {
    if (preconditionFailed(err)) {
      // Overwritten since read: rest the bytes held, or (not read, e.g. a refused key) leave the newer upload alone.
      if (!upload.bytes) return { rests: false, fromSource: false };
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: to, Body: upload.bytes }));
      return { rests: true, fromSource: false };
    }
    // Source gone: fine only if an earlier delivery put it where it belongs; otherwise let SQS retry and,
    // in the end, dead-letter it where someone will see it.
    if ((err instanceof NoSuchKey || named(err, 'NoSuchKey')) && (await exists(s3, bucket, to))) return { rests: true, fromSource: false };
    throw err;
  }
}

/** Deletes the upload if the key still holds it; a newer upload under the same key stays. */
export async function removeUpload(s3: S3Client, { bucket, key, etag }: StoredObject): Promise<void> {
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, ...(etag ? { IfMatch: etag } : {}) }));
  } catch (err) {
    if (preconditionFailed(err) || named(err, 'NoSuchKey')) return;
    throw err;
  }
}

/**
 * Whether the key still holds this upload (its ETag), a newer one, or nothing; `unknown` when S3 does not say (e.g.
 * AccessDenied).
 */
export async function sourceState(
  s3: S3Client,
  { bucket, key, etag }: StoredObject,
): Promise<'present' | 'overwritten' | 'gone' | 'unknown'> {
  try {
    const out = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return etag === undefined || unquote(out.ETag) === etag ? 'present' : 'overwritten';
  } catch (err) {
    if (err instanceof NotFound || named(err, 'NotFound', 'NoSuchKey')) return 'gone';
    return 'unknown';
  }
}

/** Whether the key holds an object (this upload or a newer one). */
export const uploadExists = (s3: S3Client, bucket: string, key: string): Promise<boolean> => exists(s3, bucket, key);

async function exists(s3: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if (err instanceof NotFound || named(err, 'NotFound')) return false;
    throw err;
  }
}
