// The ingest's S3 adapter: read an upload once into one buffer, and move it to where it rests.
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  type S3Client,
} from '@aws-sdk/client-s3';
import { RejectedUpload } from './errors';

/** The object is no longer under uploads/: an earlier delivery of the same event already moved it. */
export class UploadGone extends Error {
  override name = 'UploadGone';
}

export const tooLarge = (bytes: number, maxBytes: number): RejectedUpload =>
  new RejectedUpload('FileTooLarge', `the file is ${bytes} bytes, above the limit of ${maxBytes}`);

/**
 * Streams the object into a single buffer sized from Content-Length (no second copy), refusing anything over
 * the cap before reading it.
 */
export async function readUpload(s3: S3Client, bucket: string, key: string, maxBytes: number): Promise<Buffer> {
  let out;
  try {
    out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    if (err instanceof NoSuchKey) throw new UploadGone(`s3://${bucket}/${key} no longer exists`, { cause: err });
    throw err;
  }
  const body = out.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
  const length = out.ContentLength ?? 0;
  if (length > maxBytes) {
    body.destroy?.();
    throw tooLarge(length, maxBytes);
  }
  if (length === 0) {
    body.destroy?.();
    throw new RejectedUpload('EmptyFile', 'the file is empty (0 bytes)');
  }
  const buffer = Buffer.allocUnsafe(length);
  let offset = 0;
  for await (const chunk of body) {
    if (offset + chunk.length > length) {
      body.destroy?.();
      throw new Error(`s3://${bucket}/${key} sent more bytes than its Content-Length`);
    }
    buffer.set(chunk, offset);
    offset += chunk.length;
  }
  if (offset !== length) throw new Error(`s3://${bucket}/${key} ended after ${offset} of ${length} bytes`);
  return buffer;
}

/** Copy then delete: the object is never absent from both places. Idempotent when already moved. */
export async function moveObject(s3: S3Client, bucket: string, from: string, to: string): Promise<void> {
  try {
    await s3.send(
      new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: `${bucket}/${encodeURIComponent(from).replace(/%2F/g, '/')}` }),
    );
  } catch (err) {
    // Source gone: fine only if an earlier delivery put it where it belongs; otherwise let SQS retry and,
    // in the end, dead-letter it where someone will see it.
    if ((err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') && (await exists(s3, bucket, to))) return;
    throw err;
  }
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: from }));
}

async function exists(s3: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if (err instanceof NotFound || (err as { name?: string }).name === 'NotFound') return false;
    throw err;
  }
}
