// Erasure of one batch (DELETE /v1/batches/{batchId}): its objects under every prefix, its items (images, and the
// logs they carry), then its summary. The caller marks the summary as being deleted first, so reads answer 404 and
// the ingest refuses new uploads; until the summary is gone, running this again resumes where it stopped.
import type { S3Client } from '@aws-sdk/client-s3';
import { deleteSummary, eraseItems, type ItemEraseOptions } from '../store/batch/erasure';
import type { TableRef } from '../store/table/access';
import { eraseBatchObjects, type ObjectEraseOptions } from './objects';

export interface BatchErasureTarget {
  clientId: string;
  batchId: string;
  bucket: string;
  table: string;
}

export interface BatchErasureReport {
  objects: number;
  items: number;
  /** Passes over objects and items: more than one when an upload in flight wrote after the first. */
  passes: number;
}

/** Passes before the summary goes even though the last pass still found something (a rerun of the ingest's writes). */
const MAX_PASSES = 3;

export async function eraseBatch(
  clients: { s3: S3Client; ddb: TableRef['ddb'] },
  target: BatchErasureTarget,
  opts: { objects?: ObjectEraseOptions; items?: ItemEraseOptions } = {},
): Promise<BatchErasureReport> {
  const report: BatchErasureReport = { objects: 0, items: 0, passes: 0 };
  // An upload being ingested when the mark was set can still write its record or move its object after the first
  // pass; later passes catch that, so the summary goes last with nothing left behind it.
  while (report.passes < MAX_PASSES) {
    report.passes++;
    const objects = await eraseBatchObjects(clients.s3, target.bucket, target.clientId, target.batchId, opts.objects);
    const items = await eraseItems(clients.ddb, target, opts.items);
    report.objects += objects;
    report.items += items;
    if (objects === 0 && items === 0) break;
  }
  await deleteSummary(clients.ddb, target);
  return report;
}
