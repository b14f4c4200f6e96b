// The store's domain objects to the API's shapes (docs/design.md §3): camelCase, ISO-8601 UTC times, nulls where
// nothing is known yet.

import type { Batch } from '../domain/batch';
import type { LabelCount, ModelCount } from '../domain/detection';
import { type Image, machineIsCatOf } from '../domain/image';
import { type BatchSummary, summarizeBatch } from '../domain/summary';
import { modelOfRecord } from '../model-version';
import { type ImageLinks, NO_LINKS } from './image-links';
import type { ImageAnswer } from './schemas/images';
import type { LogEntry } from './schemas/logs';

/**
 * The batch summary is the domain's own (lib/domain/summary.ts): the completion callback sends the same shape. Here priced at
 * the configured price (ICECAT_PRICE_PER_IMAGE_USD, handed in by the function), with the batch's top labels when they
 * were counted.
 */
export const presentBatch = (
  batch: Batch,
  pricePerImageUsd: number,
  labels: LabelCount[] | null = null,
  models: ModelCount[] | null = null,
): BatchSummary => summarizeBatch(batch, { pricePerImageUsd, labels, models });

const iso = (ms: number | undefined): string | null => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

export function presentImage(image: Image, links: ImageLinks = NO_LINKS): ImageAnswer {
  return {
    batchId: image.batchId,
    fprint: image.fprint,
    fileName: image.fileName ?? null,
    status: image.status,
    isCat: typeof image.isCat === 'boolean' ? image.isCat : null,
    catConfidence: image.catConfidence ?? null,
    labels: (image.labels ?? []).map((l) => ({ name: l.name, confidence: l.confidence })),
    cats: (image.cats ?? []).map((c) => ({ confidence: c.confidence, box: { ...c.box } })),
    uploadedAt: iso(image.uploadedAt),
    classifiedAt: iso(image.classifiedAt),
    duplicates: image.duplicates ?? 0,
    duplicateFiles: image.duplicateFiles ?? [],
    reused: image.reused === true,
    machineIsCat: image.status === 'success' ? (machineIsCatOf(image) ?? null) : null,
    previous: image.previous ? { ...image.previous } : null,
    review: image.review
      ? { isCat: image.review.isCat, note: image.review.note ?? null, reviewedAt: new Date(image.review.reviewedAt).toISOString() }
      : null,
    model: presentModel(image),
    error: image.errorCode ? { code: image.errorCode, message: image.errorMessage ?? '' } : null,
    audit: image.audit ? { drawnAt: new Date(image.audit.drawnAt).toISOString(), stratum: image.audit.stratum } : null,
    capturedAt: image.capturedAt ?? null,
    camera: image.camera ?? null,
    location: image.location ? { lat: image.location.lat, lon: image.location.lon } : null,
    ...links,
  };
}

/** A classified image's model, when the read holds what says it (lib/model-version.ts modelOfRecord). */
function presentModel(image: Image): { name: string; version: string } | null {
  if (image.status !== 'success' || (image.model === undefined && image.detections === undefined)) return null;
  const { name, version } = modelOfRecord(image);
  return { name, version };
}

export function presentLogEntry(image: Image): LogEntry {
  return {
    batchId: image.batchId,
    fprint: image.fprint,
    fileName: image.fileName ?? null,
    status: image.status ?? null,
    loggedAt: iso(image.loggedAt),
    lines: image.logs ?? [],
  };
}
