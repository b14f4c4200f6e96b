// Step 2 (docs/design.md §1): read the object, with its ETag, up to a size cap, into one buffer (this upload's bytes only).
import type { IngestDeps } from '../deps';
import { RejectedUploadError } from '../errors';
import { readSource } from '../source';
import { readUpload, type StoredObject, tooLarge } from '../storage';
import type { Started } from './quota';

/** The object as read: the ETag S3 answered with, and its bytes. */
export interface Read extends Started {
  readonly object: Readonly<StoredObject> & { readonly bytes: Buffer };
}

export async function readObject(deps: IngestDeps, started: Started): Promise<Read> {
  const { upload } = started;
  const { maxUploadBytes } = deps.config;
  // The event already tells the size: refuse before reading anything.
  if (upload.size !== undefined && upload.size > maxUploadBytes) throw tooLarge(upload.size, maxUploadBytes);
  // An imported image is read where it is, on the version and ETag listed (docs/design.md §16).
  const object = upload.inPlace
    ? { ...(await readSource(deps.s3, upload.inPlace, maxUploadBytes)), bucket: upload.bucket, key: upload.key }
    : await readUpload(deps.s3, upload.bucket, upload.key, maxUploadBytes);
  if (upload.etag !== undefined && object.etag !== undefined && object.etag !== upload.etag) {
    // S3 keeps only the newer object, which its own event will process: this upload's bytes are gone.
    throw new RejectedUploadError(`the file was replaced by a newer upload (ETag ${object.etag}) before it could be read`, {
      code: 'Overwritten',
    });
  }
  upload.log.add(`read ${object.bytes.length} bytes`);
  return { ...started, object };
}
