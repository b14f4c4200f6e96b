// GET /v1/batches/{batchId}/export: the batch's images read a page at a time and encoded row by row (lib/export);
// answered inline while it stays under the inline bound, otherwise streamed to exports/ in S3 and answered with a
// 303 to a presigned GET, so a 10,000-image batch never meets Lambda's 6 MB response limit.
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ExportConfig } from '../export/config';
import { CONTENT_TYPES, type ExportFormat } from '../export/encode';
import type { ExportImage } from '../export/rows';
import { storeExport } from '../export/s3-export';
import { exportChunks, writeExport } from '../export/writer';
import { machineIsCatOf, type Image } from '../domain';
import { batchImagePages } from '../store/export-pages';
import { HttpAnswer } from './http-answer';

export interface ExportDeps {
  ddb: DynamoDBDocumentClient;
  tableName: string;
  s3: S3Client;
  bucketName: string;
  config: ExportConfig;
  now?: () => number;
}

export const exportImageOf = (image: Image): ExportImage => ({
  fprint: image.fprint,
  fileName: image.fileName ?? null,
  status: image.status,
  isCat: typeof image.isCat === 'boolean' ? image.isCat : null,
  machineIsCat: image.status === 'success' ? (machineIsCatOf(image) ?? null) : null,
  review: image.review ? { note: image.review.note ?? null } : null,
  catConfidence: image.catConfidence ?? null,
  labels: image.labels ?? [],
  uploadedAt: image.uploadedAt ?? null,
  classifiedAt: image.classifiedAt ?? null,
  duplicates: image.duplicates ?? 0,
  duplicateFiles: image.duplicateFiles ?? [],
  error: image.errorCode ? { code: image.errorCode } : null,
});

async function* exportImages(deps: ExportDeps, clientId: string, batchId: string): AsyncGenerator<ExportImage[]> {
  for await (const page of batchImagePages(deps, clientId, batchId)) yield page.map(exportImageOf);
}

/** The export of a batch the caller has checked is the client's. */
export async function exportBatch(deps: ExportDeps, clientId: string, batchId: string, format: ExportFormat): Promise<HttpAnswer> {
  const out = await writeExport(exportChunks(exportImages(deps, clientId, batchId), format), {
    inlineMaxBytes: deps.config.inlineMaxBytes,
    spill: (body) =>
      storeExport(body, {
        s3: deps.s3,
        bucket: deps.bucketName,
        clientId,
        batchId,
        format,
        urlSeconds: deps.config.urlSeconds,
        ...(deps.now ? { now: deps.now } : {}),
      }),
  });
  const rows = { 'X-Export-Rows': String(out.rows) };
  if (out.kind === 'stored') return new HttpAnswer(303, { Location: out.stored.url, ...rows });
  return new HttpAnswer(
    200,
    { 'Content-Type': CONTENT_TYPES[format], 'Content-Disposition': `attachment; filename="${batchId}.${format}"`, ...rows },
    out.body,
  );
}
