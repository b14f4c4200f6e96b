// The batch summary a client is shown, by the API and by the completion callback: one shape, presented here.
import { type Batch, type BatchStatus, reportedStatus } from './batch';
import type { Counts } from './counts';
import type { LabelCount, ModelCount } from './detection';
import type { ImportSummary } from './import';
import { type BatchUsage, batchUsage, DEFAULT_PRICE_PER_IMAGE_USD } from './pricing';

/** The completion callback's delivery as a client sees it (GET /v1/batches/{batchId}, `callback`). */
interface CallbackDelivery {
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  gaveUpAt: string | null;
}

/**
 * A batch as the API shows it and the completion callback sends it (docs/design.md §3): camelCase, ISO-8601 UTC
 * times, nulls where nothing is known yet. lib/api/schemas.ts declares the same shape for validation and OpenAPI,
 * and checks at compile time that the two agree.
 */
export interface BatchSummary {
  batchId: string;
  status: BatchStatus;
  closed: boolean;
  expected: number | null;
  counts: Counts;
  usage: BatchUsage;
  /** A done batch's top labels (GET of one batch); null where not counted. */
  labels: LabelCount[] | null;
  /** The models that answered a done batch's images, with how many each (GET of one batch); null where not counted. */
  models: ModelCount[] | null;
  debug: boolean;
  catMinConfidence: number | null;
  retentionDays: number;
  createdAt: string;
  closedAt: string | null;
  doneAt: string | null;
  expiresAt: string;
  callbackUrl: string | null;
  callback: CallbackDelivery | null;
  /** An import's progress (docs/design.md §16); only on a batch from a source. */
  import?: ImportSummary;
}

const iso = (ms: number | undefined): string | null => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

interface PresentBatchOptions {
  /** Dollars per DetectLabels call (config: ICECAT_PRICE_PER_IMAGE_USD); default DEFAULT_PRICE_PER_IMAGE_USD. */
  pricePerImageUsd?: number;
  /** The batch's top labels, when they were counted. */
  labels?: LabelCount[] | null;
  /** The models that answered its images, when they were counted. */
  models?: ModelCount[] | null;
}

export function summarizeBatch(batch: Batch, opts: PresentBatchOptions = {}): BatchSummary {
  return {
    batchId: batch.batchId,
    status: reportedStatus(batch),
    closed: batch.closed,
    expected: batch.expected ?? null,
    counts: { ...batch.counts },
    usage: batchUsage(batch.counts, opts.pricePerImageUsd ?? DEFAULT_PRICE_PER_IMAGE_USD),
    labels: opts.labels ?? null,
    models: opts.models ?? null,
    debug: batch.debug,
    catMinConfidence: batch.catMinConfidence ?? null,
    retentionDays: batch.retentionDays,
    createdAt: new Date(batch.createdAt).toISOString(),
    closedAt: iso(batch.closedAt),
    doneAt: iso(batch.doneAt),
    expiresAt: new Date(batch.expiresAt * 1000).toISOString(),
    callbackUrl: batch.callbackUrl ?? null,
    callback: presentCallback(batch),
    ...(batch.import ? { import: presentImport(batch.import) } : {}),
  };
}

function presentImport(p: NonNullable<Batch['import']>): ImportSummary {
  const { source, state, listed, enqueued, skipped } = p;
  return { source, state, listed, enqueued, skipped, resumesAt: iso(p.resumesAt) };
}

/** The completion callback's delivery: pending from the moment the batch is done until delivered or given up. */
function presentCallback(batch: Batch): CallbackDelivery | null {
  const state = batch.callback;
  if (!state) {
    return batch.callbackDue && batch.callbackUrl
      ? {
          url: batch.callbackUrl,
          status: 'pending',
          attempts: 0,
          lastAttemptAt: null,
          lastStatus: null,
          lastError: null,
          deliveredAt: null,
          gaveUpAt: null,
        }
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
