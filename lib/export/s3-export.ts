// Large exports as S3 objects: streamed up with lib-storage's Upload (multipart past one part, one part buffered
// at a time) and handed to the client as a presigned GET.

import type { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { CONTENT_TYPES, type ExportFormat, FILE_EXTENSIONS } from './encode';

/** S3's smallest multipart part; also the most one export upload holds in memory besides the inline buffer. */
const PART_BYTES = 5 * 1024 * 1024;

/** exports/{clientId}/{batchId}/{time}.{format}; the time is ISO-8601 UTC with ':' and '.' made key-safe. */
const exportKey = (clientId: string, batchId: string, atMs: number, format: ExportFormat): string =>
  `exports/${clientId}/${batchId}/${new Date(atMs).toISOString().replace(/[:.]/g, '-')}.${FILE_EXTENSIONS[format]}`;

interface StoredExport {
  key: string;
  url: string;
  expiresAt: string;
}

interface S3ExportTarget {
  s3: S3Client;
  bucket: string;
  clientId: string;
  batchId: string;
  format: ExportFormat;
  /** Lifetime of the presigned GET, at most an hour. */
  urlSeconds: number;
  now?: () => number;
}

export async function storeExport(body: Readable, t: S3ExportTarget): Promise<StoredExport> {
  const now = (t.now ?? Date.now)();
  const key = exportKey(t.clientId, t.batchId, now, t.format);
  const disposition = `attachment; filename="${t.batchId}.${FILE_EXTENSIONS[t.format]}"`;
  await new Upload({
    client: t.s3,
    params: { Bucket: t.bucket, Key: key, Body: body, ContentType: CONTENT_TYPES[t.format], ContentDisposition: disposition },
    partSize: PART_BYTES,
    queueSize: 1,
    leavePartsOnError: false,
  }).done();
  const expiresIn = Math.min(Math.max(Math.floor(t.urlSeconds), 1), 3600);
  const url = await getSignedUrl(t.s3, new GetObjectCommand({ Bucket: t.bucket, Key: key }), { expiresIn });
  return { key, url, expiresAt: new Date(now + expiresIn * 1000).toISOString() };
}
