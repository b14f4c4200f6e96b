// A multipart upload is bound to the key it was started for, as on S3. s3rver files an upload under its UploadId alone
// and takes the object's key from the upload's record, not from the request: UploadPart, ListParts,
// CompleteMultipartUpload and AbortMultipartUpload would act on any upload whose id is known, through any key — the
// key a client's scope checks (scope.ts). Each is answered NoSuchUpload unless the upload was started for the key
// in the request's URL (issue 37).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Middleware, requestTarget } from './requests';
import { type FilesystemStore, S3Error } from './s3rver-store';
import { UPLOAD_ID } from './store';

const noSuchUpload = (uploadId: string) =>
  new S3Error(
    'NoSuchUpload',
    'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
    {
      UploadId: uploadId,
    },
  );

/** The key an upload was started for, undefined when there is no such upload. */
async function uploadKey(store: FilesystemStore, bucket: string, uploadId: string): Promise<string | undefined> {
  if (!UPLOAD_ID.test(uploadId)) return undefined;
  const file = path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId, 'key');
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Answers NoSuchUpload to a request naming an upload (?uploadId) that was not started for the URL's key. */
export function multipartKeyGuard(store: FilesystemStore): Middleware {
  return async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    const target = uploadId === undefined ? undefined : requestTarget(ctx.path);
    if (!target?.key) return next();
    const id = typeof uploadId === 'string' ? uploadId : '';
    if ((await uploadKey(store, target.bucket, id)) !== target.key) throw noSuchUpload(id);
    return next();
  };
}
