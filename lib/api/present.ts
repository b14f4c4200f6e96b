// The store's domain objects to the API's shapes (docs/design.md §3): camelCase, ISO-8601 UTC times, nulls where
// nothing is known yet.
import { reportedStatus, type Batch, type Image } from '../store/model';
import { batchUsage, pricePerImageUsd } from '../usage/cost';
import type { LabelCount } from '../store/label-counts';
import { NO_LINKS, type ImageLinks } from './image-links';
import type { BatchSummary, Image as ImageAnswer, LogEntry } from './schemas';

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
    error: image.errorCode ? { code: image.errorCode, message: image.errorMessage ?? '' } : null,
    ...links,
  };
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

/**
 * The summary. `labels`: the batch's top labels, counted from its records (GET of one done batch); null where they were
 * not counted (lists, writes, a batch still changing).
 */
export function presentBatch(batch: Batch, pricePerImage: number = pricePerImageUsd(), labels: LabelCount[] | null = null): BatchSummary {
  return {
    batchId: batch.batchId,
    status: reportedStatus(batch),
    closed: batch.closed,
    expected: batch.expected ?? null,
    counts: { ...batch.counts },
    usage: batchUsage(batch.counts, pricePerImage),
    labels,
    debug: batch.debug,
    catMinConfidence: batch.catMinConfidence ?? null,
    retentionDays: batch.retentionDays,
    createdAt: new Date(batch.createdAt).toISOString(),
    closedAt: iso(batch.closedAt),
    doneAt: iso(batch.doneAt),
    expiresAt: new Date(batch.expiresAt * 1000).toISOString(),
    callbackUrl: batch.callbackUrl ?? null,
    callback: presentCallback(batch),
  };
}

/** The completion callback's delivery: pending from the moment the batch is done until delivered or given up. */
function presentCallback(batch: Batch): BatchSummary['callback'] {
  const state = batch.callback;
  if (!state) {
    return batch.callbackDue && batch.callbackUrl
      ? { url: batch.callbackUrl, status: 'pending', attempts: 0, lastAttemptAt: null, lastStatus: null, lastError: null, deliveredAt: null, gaveUpAt: null }
      : null;
  }
  return {
    url: state.url,
    status: state.deliveredAt !== null ? 'delivered' : state.gaveUpAt !== null ? 'failed' : 'pending',
    attempts: state.attempts,
    lastAttemptAt: iso(state.lastAttemptAt ?? undefined),
    lastStatus: state.lastStatus,
    lastError: state.lastError,
    deliveredAt: iso(state.deliveredAt ?? undefined),
    gaveUpAt: iso(state.gaveUpAt ?? undefined),
  };
}
