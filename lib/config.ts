// The environment's fail-fast readers, and the settings every runtime shares. The only module of lib/ and functions/
// that reads process.env: each runtime builds its configuration with these readers once, at its edge, when it starts
// (the functions: functions/config.ts and the loaders here; the CLI: lib/cli/config.ts; the local stack:
// local/config.ts), and hands the typed result down; nothing below an edge reads the environment. ESLint refuses
// process.env, these readers and the loaders anywhere else (eslint.config.mjs, docs/development.md "Configuration").
// Required values fail fast, naming the variable.
import { DEFAULT_PRICE_PER_IMAGE_USD } from './domain/pricing';
import { IceCatError } from './errors';

export class ConfigError extends IceCatError {
  override name = 'ConfigError';
  readonly code: string = 'invalid_configuration';
}

export function required(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === '') throw new ConfigError(`missing required environment variable ${name}`);
  return v;
}

/** A variable's text, or undefined when unset or empty. */
export function envString(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** A key from the environment (an HMAC key, say): required, and at least `minLength` characters. */
export function requiredSecret(name: string, minLength: number): string {
  const v = required(name);
  if (v.length < minLength) throw new ConfigError(`environment variable ${name} must be at least ${minLength} characters`);
  return v;
}

/** A number from the environment, or `fallback` when unset; anything else out of bounds fails, naming the variable. */
export function envNumber(name: string, fallback: number, bounds: { min?: number; max?: number; integer?: boolean } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const { min = -Infinity, max = Infinity, integer = false } = bounds;
  const n = Number(raw);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    const kind = integer ? 'an integer' : 'a number';
    const range = Number.isFinite(min) || Number.isFinite(max) ? ` in ${min}..${max}` : '';
    throw new ConfigError(`environment variable ${name} must be ${kind}${range}, got "${raw}"`);
  }
  return n;
}

/** `true`/`false` from the environment, or `fallback` when unset; anything else fails, naming the variable. */
export function envBoolean(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new ConfigError(`environment variable ${name} must be true or false, got "${raw}"`);
}

const count = (name: string, fallback: number, min: number, max: number): number => envNumber(name, fallback, { min, max, integer: true });
const percent = (name: string, fallback: number): number => envNumber(name, fallback, { min: 0, max: 100 });

export interface Config {
  tableName: string;
  bucketName: string;
  /** Labels at or above this confidence named Cat make rek_iscat true (Rekognition: 80; the local detector: its own scale). */
  catMinConfidence: number;
  /** Confidence floor and label cap asked of DetectLabels. */
  minConfidence: number;
  maxLabels: number;
  /** Largest upload read, in bytes. */
  maxUploadBytes: number;
  /** sharp's decompression-bomb guard: most pixels decoded. */
  maxInputPixels: number;
  /** How long a 'processing' claim holds before another run may take it over. */
  claimLeaseSeconds: number;
  defaultRetentionDays: number;
  maxRetentionDays: number;
  /** Record and counter writes in one TransactWriteItems (DynamoDB); false where the backend has none (dynalite). */
  transactions: boolean;
  /**
   * Attempts at one upload, across redeliveries and sweeps, before it ends as a `fail` record (ProcessingFailed):
   * the last one records it when its fault reaches the catch, the one after does before any risky step.
   */
  maxAttempts: number;
  /** Dollars per DetectLabels call (ICECAT_PRICE_PER_IMAGE_USD): what batch summaries and estimates price calls at. */
  pricePerImageUsd: number;
}

/** sharp's pixel limit unless MAX_INPUT_PIXELS says otherwise; the CLI's local fingerprint (--dry-run) decodes with it too. */
export const DEFAULT_MAX_INPUT_PIXELS = 100_000_000;

/** MAX_UPLOAD_BYTES: the largest file an upload form allows (50 MiB by default, at most S3's 5 GiB). */
export const maxUploadBytes = (): number => count('MAX_UPLOAD_BYTES', 50 * 1024 * 1024, 1, 5 * 1024 ** 3);

export function loadConfig(): Config {
  const defaultRetentionDays = envNumber('DEFAULT_RETENTION_DAYS', 30, { min: 1, max: 3650 });
  return {
    tableName: required('TABLE_NAME'),
    bucketName: required('BUCKET_NAME'),
    catMinConfidence: percent('CAT_MIN_CONFIDENCE', 80),
    // Low, so a batch can be re-thresholded later (POST …:reclassify) without calling Rekognition again.
    minConfidence: percent('REKOGNITION_MIN_CONFIDENCE', 20),
    maxLabels: count('REKOGNITION_MAX_LABELS', 25, 1, 1000),
    maxUploadBytes: maxUploadBytes(),
    maxInputPixels: count('MAX_INPUT_PIXELS', DEFAULT_MAX_INPUT_PIXELS, 1, 2 ** 32),
    claimLeaseSeconds: envNumber('CLAIM_LEASE_SECONDS', 120, { min: 1, max: 86_400 }),
    defaultRetentionDays,
    maxRetentionDays: envNumber('MAX_RETENTION_DAYS', 365, { min: defaultRetentionDays, max: 3650 }),
    transactions: envBoolean('DDB_TRANSACTIONS', true),
    maxAttempts: count('INGEST_MAX_ATTEMPTS', 5, 1, 100),
    pricePerImageUsd: pricePerImageUsd(),
  };
}

/** What only the ingest function reads. */
export interface IngestConfig extends Config {
  /** Images one invocation works on at once. */
  parallelism: number;
  /** Whether DetectLabels requests name the uploading client (REKOGNITION_CLIENT_HINT; the local stack's detector only). */
  clientHint: boolean;
}

export function loadIngestConfig(): IngestConfig {
  return { ...loadConfig(), parallelism: count('INGEST_PARALLELISM', 4, 1, 64), clientHint: envBoolean('REKOGNITION_CLIENT_HINT', false) };
}

/** How the AWS clients are built (lib/aws/clients.ts), read at each edge that builds them. */
export interface AwsClientSettings {
  /** Path-style S3 requests (S3_FORCE_PATH_STYLE; the local S3 needs them). */
  s3ForcePathStyle: boolean;
  /** DetectLabels attempts, throttling retries included (REKOGNITION_MAX_ATTEMPTS, 6; the SDK's jittered backoff). */
  rekognitionMaxAttempts: number;
}

export const loadAwsClientSettings = (): AwsClientSettings => ({
  s3ForcePathStyle: envBoolean('S3_FORCE_PATH_STYLE', false),
  rekognitionMaxAttempts: count('REKOGNITION_MAX_ATTEMPTS', 6, 1, 20),
});

/** Whether and as what a function traces (lib/aws/tracing.ts startTracing), read by each function's handler first. */
export interface TracingSettings {
  /**
   * Whether Powertools' Tracer would trace here, by its own rule: inside Lambda (AWS_EXECUTION_ENV set, not Amplify's
   * mock, not SAM local) unless POWERTOOLS_TRACE_ENABLED is "false". The Tracer is loaded only then.
   */
  on: boolean;
  /** The handler's name as Lambda sets it (_HANDLER), for the traced handler's `## <handler>` subsegment. */
  handlerName: string;
}

export function loadTracingSettings(): TracingSettings {
  const executionEnv = envString('AWS_EXECUTION_ENV') ?? '';
  const inLambda = executionEnv !== '' && executionEnv !== 'AWS_Lambda_amplify-mock' && !envString('AWS_SAM_LOCAL');
  return {
    on: inLambda && (envString('POWERTOOLS_TRACE_ENABLED') ?? '').toLowerCase() !== 'false',
    handlerName: envString('_HANDLER') ?? 'handler',
  };
}

/** ICECAT_PRICE_PER_IMAGE_USD: dollars per DetectLabels call (0–1); a bad value fails naming the variable. */
export const pricePerImageUsd = (): number => envNumber('ICECAT_PRICE_PER_IMAGE_USD', DEFAULT_PRICE_PER_IMAGE_USD, { min: 0, max: 1 });

/**
 * A re-detection's image queued longer ago than this, and not claimed, in a run no answer reached for as long, is in no
 * one's hands and may be queued again (lib/redetect/resume.ts): the reconcile sweep's grace (RECONCILE_GRACE_SECONDS,
 * 900 s: a message may wait that long in a busy queue), in ms.
 */
export const redetectResumeGraceMs = (): number => envNumber('RECONCILE_GRACE_SECONDS', 900, { min: 0, max: 14 * 86_400 }) * 1000;

/**
 * The records a re-detection run starts at a time, each page charged once (docs/decisions/0039-redetect-runs.md):
 * REDETECT_PAGE_SIZE, 1–100, else the run's own (lib/store/redetect/run-state.ts START_PAGE, 100). Smaller pages cost more
 * requests a run; they let a test page through a few hundred images as a run pages through thousands.
 */
export const redetectPaging = (): { pageSize?: number } =>
  envString('REDETECT_PAGE_SIZE') === undefined
    ? {}
    : { pageSize: envNumber('REDETECT_PAGE_SIZE', 100, { min: 1, max: 100, integer: true }) };
