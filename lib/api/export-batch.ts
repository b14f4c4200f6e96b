// GET /v1/batches/{batchId}/export: the batch's images read a page at a time and encoded row by row (lib/export);
// answered inline while it stays under the inline bound, otherwise streamed to exports/ in S3 and answered with a
// 303 to a presigned GET, so a 10,000-image batch never meets Lambda's 6 MB response limit.
import type { S3Client } from '@aws-sdk/client-s3';
import { type Image, machineIsCatOf } from '../domain/image';
import { CONTENT_TYPES, type ExportFormat, FILE_EXTENSIONS } from '../export/encode';
import type { MegaDetectorContext } from '../export/megadetector';
import { mapPages } from '../export/pages';
import type { ExportImage } from '../export/rows';
import { storeExport } from '../export/s3-export';
import { type ExportChunk, type ExportConfig, exportChunks, writeExport } from '../export/writer';
import { modelOfRecord } from '../model-version';
import { HttpAnswer } from './http-answer';

/**
 * What an export asks of the store, and only that (lib/store/batch/pages.ts BatchImagePages implements it; a test may
 * hand a fake): a batch's images a page at a time, read as the format needs them: `rows` what the CSV and JSON Lines
 * columns show, `detections` what the MegaDetector file writes (every box). Expired images are left out.
 */
export interface ExportReads {
  imagePages(clientId: string, batchId: string, read: 'rows' | 'detections'): AsyncGenerator<Image[]>;
}

/**
 * Where an answer goes once past the inline bound (exports/ in the bucket, behind a presigned GET of `urlSeconds`),
 * and the clock its key is named by: what the exports and the import report write with (answerExport).
 */
export interface ExportSpillDeps {
  s3: S3Client;
  bucketName: string;
  config: ExportConfig;
  now?: () => number;
}

/** What a batch's export is built with: the store's pages of its images, and where a large export goes. */
export interface ExportDeps extends ExportSpillDeps {
  images: ExportReads;
}

export const exportImageOf = (image: Image): ExportImage => ({
  fprint: image.fprint,
  fileName: image.fileName ?? null,
  status: image.status,
  isCat: typeof image.isCat === 'boolean' ? image.isCat : null,
  machineIsCat: image.status === 'success' ? (machineIsCatOf(image) ?? null) : null,
  review: image.review ? { isCat: image.review.isCat, note: image.review.note ?? null } : null,
  catConfidence: image.catConfidence ?? null,
  labels: image.labels ?? [],
  uploadedAt: image.uploadedAt ?? null,
  classifiedAt: image.classifiedAt ?? null,
  duplicates: image.duplicates ?? 0,
  duplicateFiles: image.duplicateFiles ?? [],
  error: image.errorCode ? { code: image.errorCode } : null,
  ...(image.cats ? { cats: image.cats } : {}),
  ...(image.detections ? { boxes: image.detections.boxes } : {}),
  ...(image.status === 'success' && (image.model || image.detections) ? { model: modelOfRecord(image) } : {}),
  ...(typeof image.width === 'number' && typeof image.height === 'number' ? { width: image.width, height: image.height } : {}),
  capturedAt: image.capturedAt ?? null,
  camera: image.camera ?? null,
  location: image.location ?? null,
});

/**
 * A batch's images a page at a time, read as the format needs them (the bench export reads the same way); each page
 * dropped once mapped (mapPages).
 */
export function exportImages(images: ExportReads, clientId: string, batchId: string, format: ExportFormat): AsyncGenerator<ExportImage[]> {
  const read = format === 'megadetector' ? 'detections' : 'rows';
  return mapPages(images.imagePages(clientId, batchId, read), (page) => page.map(exportImageOf));
}

/** The export of a batch the caller has checked is the client's; `batch` says its threshold and completion. */
export async function exportBatch(
  deps: ExportDeps,
  clientId: string,
  batchId: string,
  format: ExportFormat,
  batch: MegaDetectorContext = { catMinConfidence: 0 },
): Promise<HttpAnswer> {
  return answerExport(deps, exportChunks(exportImages(deps.images, clientId, batchId, format), format, batch), {
    clientId,
    batchId,
    format,
    contentType: CONTENT_TYPES[format],
    fileName: `${batchId}.${FILE_EXTENSIONS[format]}`,
  });
}

/** Where a streamed answer is kept once past the inline bound, and what it is called and typed when inline. */
interface ExportTarget {
  clientId: string;
  batchId: string;
  /** The stored object's format (its key's extension). */
  format: ExportFormat;
  contentType: string;
  fileName: string;
}

/** Rows written inline while small, else streamed to S3 and answered with a 303 to it (the exports and the report). */
export async function answerExport(deps: ExportSpillDeps, chunks: AsyncIterable<ExportChunk>, target: ExportTarget): Promise<HttpAnswer> {
  const { clientId, batchId, format } = target;
  const out = await writeExport(chunks, {
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
    { 'Content-Type': target.contentType, 'Content-Disposition': `attachment; filename="${target.fileName}"`, ...rows },
    out.body,
  );
}
