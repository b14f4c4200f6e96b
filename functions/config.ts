// The functions' configuration: every setting a Lambda function reads, each read by lib/config.ts's fail-fast readers
// when the function is built (at cold start, or when a test or the local stack builds it), never later. The settings
// every runtime shares (the table, the bucket, the thresholds, the price) are lib/config.ts's `loadConfig`.
import {
  type Config,
  ConfigError,
  envBoolean,
  envNumber,
  envString,
  loadConfig,
  pricePerImageUsd,
  redetectPaging,
  redetectResumeGraceMs,
  required,
  requiredSecret,
} from '../lib/config';
import type { ExportConfig } from '../lib/export/writer';
import type { BatchOperationsSettings } from '../lib/import/batch-operations';
import { MAX_DELAY_SECONDS } from '../lib/jobs/queue';
import { MIN_SIGNING_KEY_LENGTH } from '../lib/notify/completion';
import type { NotifyConfig } from '../lib/notify/schedule';
import { type PortRanges, parsePortRanges } from '../lib/notify/target';
import { type ClientLimits, MAX_BATCHES_PER_DAY, MAX_IMAGES_PER_DAY, MAX_RATE_PER_SECOND } from '../lib/quota/limits';
import type { SweepLimits } from '../lib/reconcile/sweep';
import { MIN_CURSOR_SECRET_LENGTH } from '../lib/store/table/cursor';
import type { S3OriginSettings } from '../lib/web/site';

export interface ApiConfig extends Config {
  /** Lifetime of the presigned POST forms POST /v1/batches hands out. */
  uploadExpiresSeconds: number;
  /** Most files one POST /v1/batches may declare. */
  maxFilesPerBatch: number;
  /** How long a container trusts an API key it has looked up. */
  apiKeyCacheMs: number;
  /** Least lifetime of an image's presigned thumbnailUrl and imageUrl (each lives up to IMAGE_URL_WINDOW_SECONDS more). */
  imageUrlSeconds: number;
}

/** Image URLs are signed as of the start of such a window, so an image answers the same URLs within it (cacheable). */
export const IMAGE_URL_WINDOW_SECONDS = 300;

/**
 * The HMAC key of paging cursors (CURSOR_SECRET; on AWS a generated Secrets Manager secret, see serverless.yml). Only
 * the read function pages, so only it is given the secret.
 */
export const loadCursorSecret = (): string => requiredSecret('CURSOR_SECRET', MIN_CURSOR_SECRET_LENGTH);

/** The API functions' configuration: the shared settings plus what only the API needs. */
export function loadApiConfig(): ApiConfig {
  return {
    ...loadConfig(),
    // S3 caps a presigned POST policy at 7 days. Tests of the clients' renewal set a few seconds.
    uploadExpiresSeconds: envNumber('UPLOAD_EXPIRES_SECONDS', 900, { min: 1, max: 7 * 86400, integer: true }),
    maxFilesPerBatch: envNumber('MAX_FILES_PER_BATCH', 500, { min: 1, max: 1000, integer: true }),
    apiKeyCacheMs: envNumber('API_KEY_CACHE_MS', 60_000, { min: 0, max: 3_600_000, integer: true }),
    // Within an hour in all, window included.
    imageUrlSeconds: envNumber('IMAGE_URL_SECONDS', 900, { min: 60, max: 3600 - IMAGE_URL_WINDOW_SECONDS, integer: true }),
  };
}

/** Where the functions reach S3 and with which role: the region, and the endpoint of AWS_ENDPOINT_URL_S3 when set (the local S3). */
export interface S3Settings {
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
}

export function loadS3Settings(): S3Settings {
  const endpoint = envString('AWS_ENDPOINT_URL_S3') ?? envString('AWS_ENDPOINT_URL');
  return { region: required('AWS_REGION'), ...(endpoint ? { endpoint } : {}), forcePathStyle: envBoolean('S3_FORCE_PATH_STYLE', false) };
}

/** What the web site's CSP names the bucket's origins from (lib/web/site.ts, s3Origins), each only when set. */
export function loadS3OriginSettings(): S3OriginSettings {
  const endpoint = envString('AWS_ENDPOINT_URL_S3') ?? envString('AWS_ENDPOINT_URL');
  const bucket = envString('BUCKET_NAME');
  const region = envString('AWS_REGION') ?? envString('AWS_DEFAULT_REGION');
  return { ...(endpoint ? { endpoint } : {}), ...(bucket ? { bucket } : {}), ...(region ? { region } : {}) };
}

export const loadExportConfig = (): ExportConfig => ({
  inlineMaxBytes: envNumber('EXPORT_INLINE_MAX_BYTES', 1024 * 1024, { min: 0, max: 4 * 1024 * 1024, integer: true }),
  urlSeconds: envNumber('EXPORT_URL_SECONDS', 900, { min: 60, max: 3600, integer: true }),
});

/** The table alone, for a function that needs nothing else of loadConfig (the expiry sweep). */
export const loadTableName = (): string => required('TABLE_NAME');

/** The queues and the bus a function sends to, by their names on AWS: each required where it is read. */
export const queueUrl = (name: 'INGEST_QUEUE_URL' | 'CALLBACK_QUEUE_URL' | 'ERASE_QUEUE_URL'): string => required(name);
export const loadNotifyWiringSettings = (): { callbackQueueUrl: string; eventBusName: string } => ({
  callbackQueueUrl: queueUrl('CALLBACK_QUEUE_URL'),
  eventBusName: required('EVENT_BUS_NAME'),
});

/** The server key callback secrets are derived from (CALLBACK_SIGNING_KEY; on AWS a Secrets Manager secret). */
export const loadCallbackSigningKey = (): string => requiredSecret('CALLBACK_SIGNING_KEY', MIN_SIGNING_KEY_LENGTH);

export function loadNotifyConfig(): NotifyConfig {
  return {
    retry: {
      baseSeconds: envNumber('CALLBACK_RETRY_BASE_SECONDS', 30, { min: 0 }),
      maxDelaySeconds: envNumber('CALLBACK_RETRY_MAX_DELAY_SECONDS', MAX_DELAY_SECONDS, { min: 0, max: MAX_DELAY_SECONDS }),
      windowSeconds: envNumber('CALLBACK_RETRY_WINDOW_SECONDS', 86_400, { min: 0 }),
    },
    timeoutMs: envNumber('CALLBACK_TIMEOUT_MS', 10_000, { min: 1, max: 60_000, integer: true }),
    allowLoopback: envBoolean('CALLBACK_ALLOW_LOOPBACK', false),
    loopbackPorts: envPortRanges('CALLBACK_LOOPBACK_PORTS'),
  };
}

/** A list of ports and ranges ("8080,9000-9099") from the environment, none when unset; anything else fails. */
function envPortRanges(name: string): PortRanges {
  const raw = envString(name) ?? '';
  const ranges = parsePortRanges(raw);
  if (!ranges) throw new ConfigError(`environment variable ${name} must list ports 1-65535 and ranges like "8080,9000-9099", got "${raw}"`);
  return ranges;
}

/**
 * The defaults: CLIENT_DEFAULT_RATE (50 requests/s), CLIENT_DEFAULT_MAX_IMAGES_PER_DAY (100,000) and
 * CLIENT_DEFAULT_MAX_BATCHES_PER_DAY (1,000).
 */
export function defaultClientLimits(): ClientLimits {
  return {
    ratePerSecond: envNumber('CLIENT_DEFAULT_RATE', 50, { min: 0.1, max: MAX_RATE_PER_SECOND }),
    maxImagesPerDay: envNumber('CLIENT_DEFAULT_MAX_IMAGES_PER_DAY', 100_000, { min: 0, max: MAX_IMAGES_PER_DAY, integer: true }),
    maxBatchesPerDay: envNumber('CLIENT_DEFAULT_MAX_BATCHES_PER_DAY', 1_000, { min: 0, max: MAX_BATCHES_PER_DAY, integer: true }),
  };
}

/** How long a container trusts a client's limits it has read: a changed limit applies within it (CLIENT_LIMITS_CACHE_MS, 10 s). */
export const clientLimitsCacheMs = (): number => envNumber('CLIENT_LIMITS_CACHE_MS', 10_000, { min: 0, max: 3_600_000, integer: true });

export interface ReconcileConfig {
  bucketName: string;
  queueUrl: string;
  region: string;
  limits: SweepLimits;
  /** Completion callbacks whose message was lost are queued again here (lib/reconcile/callbacks.ts). */
  callbacks: { tableName: string; queueUrl: string; graceSeconds: number };
  /** What the batches whose callbacks it queues again are priced at (ICECAT_PRICE_PER_IMAGE_USD). */
  pricePerImageUsd: number;
}

/** How long a callback may show no progress beyond its own retry waits before the sweep queues it again. */
export const callbackGraceSeconds = (): number => envNumber('CALLBACK_REQUEUE_GRACE_SECONDS', 120, { min: 0, max: 86_400 });

/** The sweep's settings, read once per container; a bad value stops it at start. */
export function loadReconcileConfig(): ReconcileConfig {
  return {
    bucketName: required('BUCKET_NAME'),
    queueUrl: queueUrl('INGEST_QUEUE_URL'),
    region: required('AWS_REGION'),
    limits: {
      graceMs: envNumber('RECONCILE_GRACE_SECONDS', 900, { min: 0, max: 14 * 86_400 }) * 1000,
      maxObjects: envNumber('RECONCILE_MAX_OBJECTS', 5000, { min: 1, max: 1_000_000, integer: true }),
      maxDurationMs: envNumber('RECONCILE_MAX_SECONDS', 60, { min: 1, max: 900 }) * 1000,
    },
    callbacks: { tableName: required('TABLE_NAME'), queueUrl: queueUrl('CALLBACK_QUEUE_URL'), graceSeconds: callbackGraceSeconds() },
    pricePerImageUsd: pricePerImageUsd(),
  };
}

/**
 * The reconcile sweep's look after re-detection runs (lib/reconcile/redetect-runs.ts): the table's transactions
 * (DDB_TRANSACTIONS, on), how long an image may sit queued with no answer (RECONCILE_GRACE_SECONDS) and the records it
 * starts a page at a time (REDETECT_PAGE_SIZE).
 */
export const loadReconcileRedetect = (): { transactions: boolean; graceMs: number; pageSize?: number } => ({
  transactions: envBoolean('DDB_TRANSACTIONS', true),
  graceMs: redetectResumeGraceMs(),
  ...redetectPaging(),
});

/**
 * The reconcile sweep's look after import jobs (lib/reconcile/import-jobs.ts): on where the stack has the import task
 * (IMPORT_TASK_FUNCTION_ARN set; undefined otherwise), with the table's transactions (DDB_TRANSACTIONS, on).
 */
export function loadReconcileImports(): { transactions: boolean } | undefined {
  if (!envString('IMPORT_TASK_FUNCTION_ARN')) return undefined;
  return { transactions: envBoolean('DDB_TRANSACTIONS', true) };
}

/**
 * An import's Batch Operations job on AWS (lib/import/batch-operations.ts): the importTask function it invokes
 * (IMPORT_TASK_FUNCTION_ARN, whose ARN also names the account and partition), the role it runs as
 * (IMPORT_JOB_ROLE_ARN), the bucket its report goes to (BUCKET_NAME) and its priority (IMPORT_JOB_PRIORITY, 10).
 * Read when the first import starts, not at cold start: a stack that never imports needs none of them.
 */
export function loadBatchOperationsSettings(): BatchOperationsSettings {
  const taskFunctionArn = required('IMPORT_TASK_FUNCTION_ARN');
  const arn = /^arn:([^:]+):lambda:[^:]+:(\d{12}):function:/.exec(taskFunctionArn);
  if (!arn)
    throw new ConfigError(`environment variable IMPORT_TASK_FUNCTION_ARN must be a Lambda function's ARN, got "${taskFunctionArn}"`);
  return {
    partition: arn[1] as string,
    accountId: arn[2] as string,
    taskFunctionArn,
    jobRoleArn: required('IMPORT_JOB_ROLE_ARN'),
    reportBucket: required('BUCKET_NAME'),
    priority: envNumber('IMPORT_JOB_PRIORITY', 10, { min: 0, max: 2_147_483_647, integer: true }),
  };
}
