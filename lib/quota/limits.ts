// Per-client limits (docs/design.md §11): API requests per second (a token bucket holding twice that, the burst),
// uploads accepted per UTC day and batches created per UTC day. Each client may have its own (client:create --rate N
// --max-images-per-day N --max-batches-per-day N); a client without them gets the defaults, from the environment (functions/config.ts).
import { IceCatError, type IceCatErrorOptions } from '../errors';

export interface ClientLimits {
  /** API requests per second, sustained; the burst is twice this. */
  ratePerSecond: number;
  /** Uploads accepted per UTC day; beyond it they end as `fail` records with code QuotaExceeded. */
  maxImagesPerDay: number;
  /** Batches created per UTC day (POST /v1/batches, or a plain-S3 upload into a new batch id). */
  maxBatchesPerDay: number;
}

/** What a client has set of its own; the rest comes from the defaults. */
export type ClientLimitSettings = Partial<ClientLimits>;

export const MAX_RATE_PER_SECOND = 10_000;
export const MAX_IMAGES_PER_DAY = 100_000_000;
export const MAX_BATCHES_PER_DAY = 1_000_000;

export const withDefaults = (own: ClientLimitSettings, defaults: ClientLimits): ClientLimits => ({
  ratePerSecond: own.ratePerSecond ?? defaults.ratePerSecond,
  maxImagesPerDay: own.maxImagesPerDay ?? defaults.maxImagesPerDay,
  maxBatchesPerDay: own.maxBatchesPerDay ?? defaults.maxBatchesPerDay,
});

/** The burst a rate allows: twice the rate, and at least one request. */
export const burstOf = (ratePerSecond: number): number => Math.max(1, 2 * ratePerSecond);

/** The UTC day of an instant, YYYY-MM-DD: the quota's period. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The start of the next UTC day: when the daily quota starts afresh. */
export const nextUtcDay = (ms: number): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
};

/** The message of a QuotaExceeded fail record. */
export const quotaExceededMessage = (limit: number, day: string): string =>
  `the client's quota of ${limit} images per UTC day is used up for ${day}: the upload is recorded, not classified, and its file is not kept; the quota starts afresh at 00:00 UTC`;

/**
 * A request beyond one of the client's daily limits: upload forms beyond today's remaining images, or a batch beyond
 * today's batches. Answered 429 quota_exceeded with Retry-After: the seconds until the quota starts afresh.
 */
class QuotaExceededError extends IceCatError {
  override name = 'QuotaExceededError';
  readonly code = 'quota_exceeded';
  /** Whole seconds until 00:00 UTC (Retry-After). */
  readonly retryAfterSeconds: number;
  constructor(message: string, options: IceCatErrorOptions & { retryAfterSeconds: number }) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Upload forms asked beyond the images left today. */
export const formsBeyondQuota = (limits: ClientLimits, accepted: number, asked: number, nowMs: number): QuotaExceededError =>
  beyondQuota(
    `${asked} upload ${asked === 1 ? 'form' : 'forms'} asked, but ${Math.max(0, limits.maxImagesPerDay - accepted)} of the client's quota of ` +
      `${limits.maxImagesPerDay} images per UTC day ${limits.maxImagesPerDay - accepted === 1 ? 'is' : 'are'} left for ${utcDay(nowMs)}`,
    nowMs,
  );

/** A batch beyond the batches allowed today. */
export const batchesBeyondQuota = (limits: ClientLimits, nowMs: number): QuotaExceededError =>
  beyondQuota(`the client's limit of ${limits.maxBatchesPerDay} batches per UTC day is used up for ${utcDay(nowMs)}`, nowMs);

/** Re-detections asked beyond the images left today: they count as uploads. */
export const redetectionsBeyondQuota = (limits: ClientLimits, asked: number, nowMs: number): QuotaExceededError =>
  beyondQuota(
    `${asked} re-detections asked, beyond the client's quota of ${limits.maxImagesPerDay} images per UTC day for ${utcDay(nowMs)}`,
    nowMs,
  );

/** Failed imported images asked to be sent again (:retry) beyond the images left today: they count as uploads. */
export const retriesBeyondQuota = (limits: ClientLimits, asked: number, nowMs: number): QuotaExceededError =>
  beyondQuota(
    `${asked} failed images to send again, beyond the client's quota of ${limits.maxImagesPerDay} images per UTC day for ${utcDay(nowMs)}`,
    nowMs,
  );

/** `what` was refused for a daily quota: the message names the reset time, Retry-After the seconds until it. */
function beyondQuota(what: string, nowMs: number): QuotaExceededError {
  const reset = nextUtcDay(nowMs);
  return new QuotaExceededError(`${what}; the quota starts afresh at ${new Date(reset).toISOString()}`, {
    retryAfterSeconds: Math.max(1, Math.ceil((reset - nowMs) / 1000)),
  });
}
