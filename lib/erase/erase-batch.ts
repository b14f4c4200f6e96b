// Erasure of one batch (DELETE /v1/batches/{batchId}): its objects under every prefix, its items (images, and the
// logs they carry), then its summary. The caller marks the summary as being deleted first, so reads answer 404 and
// the ingest refuses new uploads; until the summary is gone, running this again resumes where it stopped.
import type { S3Client } from '@aws-sdk/client-s3';
import type { ItemEraseOptions } from '../store/batch/erasure';
import { eraseBatchObjects, type ObjectEraseOptions } from './objects';

/**
 * What the erasure asks of the store, and only that (lib/store/batch/erasure.ts BatchErasure implements it; a test may
 * hand a fake).
 */
export interface ErasureStore {
  /** Whether the batch's summary exists and is marked as being erased. */
  isMarked(clientId: string, batchId: string): Promise<boolean>;
  /** Deletes the batch's items but its summary; how many went. */
  eraseItems(clientId: string, batchId: string, opts?: ItemEraseOptions): Promise<number>;
  deleteSummary(clientId: string, batchId: string): Promise<void>;
}

export interface BatchErasureTarget {
  clientId: string;
  batchId: string;
  bucket: string;
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
  clients: { s3: S3Client; store: ErasureStore },
  target: BatchErasureTarget,
  opts: { objects?: ObjectEraseOptions; items?: ItemEraseOptions } = {},
): Promise<BatchErasureReport> {
  const report: BatchErasureReport = { objects: 0, items: 0, passes: 0 };
  // An upload being ingested when the mark was set can still write its record or move its object after the first
  // pass; later passes catch that, so the summary goes last with nothing left behind it.
  while (report.passes < MAX_PASSES) {
    report.passes++;
    const objects = await eraseBatchObjects(clients.s3, target.bucket, target.clientId, target.batchId, opts.objects);
    const items = await clients.store.eraseItems(target.clientId, target.batchId, opts.items);
    report.objects += objects;
    report.items += items;
    if (objects === 0 && items === 0) break;
  }
  await clients.store.deleteSummary(target.clientId, target.batchId);
  return report;
}
