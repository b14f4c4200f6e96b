// Presigned POST forms for POST /v1/batches: each one lets a browser or any HTTP client upload exactly one file, to
// its exact key, as an image/* type, within a size range, until it expires. S3 enforces the policy, and so does the
// local S3 (local/s3/post-policy.ts).

import type { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPostOptions } from '@aws-sdk/s3-presigned-post';
import type { UploadForm } from './schemas/batches';

export interface DeclaredFile {
  name: string;
  contentType: string;
  size: number;
}

const uploadKey = (clientId: string, batchId: string, fileName: string): string => `uploads/${clientId}/${batchId}/${fileName}`;

/** The createPresignedPost input for one declared file (pure). */
export function uploadPolicy(
  bucket: string,
  clientId: string,
  batchId: string,
  file: DeclaredFile,
  expiresSeconds: number,
): PresignedPostOptions {
  return {
    Bucket: bucket,
    // A fixed key (no ${filename}) makes the SDK add an exact {key} condition.
    Key: uploadKey(clientId, batchId, file.name),
    Conditions: [
      ['content-length-range', 1, file.size],
      ['starts-with', '$Content-Type', 'image/'],
    ],
    // Fields become exact-match conditions too: the declared type is the one accepted.
    Fields: { 'Content-Type': file.contentType },
    Expires: expiresSeconds,
  };
}

export async function presignUploads(
  s3: S3Client,
  bucket: string,
  clientId: string,
  batchId: string,
  files: readonly DeclaredFile[],
  expiresSeconds: number,
): Promise<UploadForm[]> {
  return Promise.all(
    files.map(async (file) => {
      const { url, fields } = await createPresignedPost(s3, uploadPolicy(bucket, clientId, batchId, file, expiresSeconds));
      return { file: file.name, url, fields };
    }),
  );
}
