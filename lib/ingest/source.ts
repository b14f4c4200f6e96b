// An imported image's object, read where it is (docs/design.md §16): GetObject on its bucket, key and the version
// listed, If-Match the ETag listed, into one buffer as an upload is read. Nothing at the source is written, copied or
// deleted; an object changed since it was listed fails `SourceChanged`, one gone `SourceMissing`.
import { GetObjectCommand, NoSuchKey, type S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { SourceObject } from '../domain/image';
import { RejectedUploadError } from './errors';
import { bufferBody, type StoredObject } from './storage';

const named = (err: unknown, ...names: string[]): boolean => names.includes((err as { name?: string }).name ?? '');
const status = (err: unknown): number | undefined => (err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined);

/** The object's bytes and ETag; a RejectedUploadError when it changed or is gone, any other fault as it came. */
export async function readSource(s3: S3Client, source: SourceObject, maxBytes: number): Promise<StoredObject & { bytes: Buffer }> {
  const where = `s3://${source.bucket}/${source.key}${source.versionId !== undefined ? ` (version ${source.versionId})` : ''}`;
  let out;
  try {
    out = await s3.send(
      new GetObjectCommand({
        Bucket: source.bucket,
        Key: source.key,
        ...(source.versionId !== undefined ? { VersionId: source.versionId } : {}),
        ...(source.etag !== undefined ? { IfMatch: `"${source.etag}"` } : {}),
      }),
    );
  } catch (err) {
    if (named(err, 'PreconditionFailed') || status(err) === 412)
      throw new RejectedUploadError(`${where} changed since it was listed (its ETag is no longer ${source.etag ?? '?'})`, {
        code: 'SourceChanged',
        cause: err,
      });
    if (err instanceof NoSuchKey || named(err, 'NoSuchKey', 'NoSuchVersion', 'NotFound') || status(err) === 404)
      throw new RejectedUploadError(`${where} is no longer at its source`, { code: 'SourceMissing', cause: err });
    throw err;
  }
  const { etag, bytes } = await bufferBody(out, where, maxBytes);
  return { bucket: source.bucket, key: source.key, ...(etag !== undefined ? { etag } : {}), bytes };
}
