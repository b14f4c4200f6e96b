// Store items to the API's shapes (DESIGN §3): camelCase, ISO-8601 UTC times, nulls where nothing is known yet.
import type { ImageListing, LogListing } from '../store/queries';
import type { BatchItem } from '../store/schema';
import type { BatchSummary, Image, LogEntry } from './schemas';

const iso = (ms: number | undefined): string | null => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

export function presentImage(item: ImageListing): Image {
  return {
    batchId: item.batch_id,
    fprint: item.img_fprint,
    fileName: item.file_name ?? null,
    status: item.op_status,
    isCat: typeof item.rek_iscat === 'boolean' ? item.rek_iscat : null,
    labels: (item.labels ?? []).map((l) => ({ name: l.name, confidence: l.confidence })),
    uploadedAt: iso(item.upload_ts ?? item.received_ts),
    classifiedAt: iso(item.rek_ts),
    duplicates: item.dup_count ?? 0,
    error: item.err_code ? { code: item.err_code, message: item.err_msg ?? '' } : null,
  };
}

export function presentLogEntry(item: LogListing): LogEntry {
  return {
    batchId: item.batch_id,
    fprint: item.img_fprint,
    fileName: item.file_name ?? null,
    status: item.op_status ?? null,
    loggedAt: iso(item.log_ts),
    lines: item.logs ?? [],
  };
}

/**
 * open: fewer files arrived than were declared (or none yet, when none were declared); processing: some arrived
 * file is not yet success, fail or duplicate; done: every arrived file is.
 */
export function batchStatus(item: Pick<BatchItem, 'expected' | 'n_total' | 'n_success' | 'n_fail' | 'n_duplicate'>): BatchSummary['status'] {
  const arrived = item.n_total ?? 0;
  const finished = (item.n_success ?? 0) + (item.n_fail ?? 0) + (item.n_duplicate ?? 0);
  if (typeof item.expected === 'number' ? arrived < item.expected : arrived === 0) return 'open';
  return finished < arrived ? 'processing' : 'done';
}

export function presentBatch(item: BatchItem): BatchSummary {
  return {
    batchId: item.batch_id,
    status: batchStatus(item),
    counts: {
      total: item.n_total ?? 0,
      success: item.n_success ?? 0,
      fail: item.n_fail ?? 0,
      duplicate: item.n_duplicate ?? 0,
      cats: item.n_cats ?? 0,
    },
    expected: typeof item.expected === 'number' ? item.expected : null,
    debug: item.debug === true,
    retentionDays: item.retention_days,
    createdAt: new Date(item.created_ts).toISOString(),
    expiresAt: new Date(item.ttl * 1000).toISOString(),
  };
}
