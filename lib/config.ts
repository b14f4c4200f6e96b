// Configuration read from the environment once per container. Required values fail fast, naming the variable.

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function required(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === '') throw new ConfigError(`missing required environment variable ${name}`);
  return v;
}

/** A number from the environment, or `fallback` when unset; anything else out of bounds fails, naming the variable. */
export function envNumber(
  name: string,
  fallback: number,
  bounds: { min?: number; max?: number; integer?: boolean } = {},
): number {
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

const numberOr = (name: string, fallback: number): number => envNumber(name, fallback);

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
}

export function loadConfig(): Config {
  return {
    tableName: required('TABLE_NAME'),
    bucketName: required('BUCKET_NAME'),
    catMinConfidence: numberOr('CAT_MIN_CONFIDENCE', 80),
    minConfidence: numberOr('REKOGNITION_MIN_CONFIDENCE', 50),
    maxLabels: numberOr('REKOGNITION_MAX_LABELS', 25),
    maxUploadBytes: numberOr('MAX_UPLOAD_BYTES', 50 * 1024 * 1024),
    maxInputPixels: numberOr('MAX_INPUT_PIXELS', 100_000_000),
    claimLeaseSeconds: numberOr('CLAIM_LEASE_SECONDS', 120),
    defaultRetentionDays: numberOr('DEFAULT_RETENTION_DAYS', 30),
    maxRetentionDays: numberOr('MAX_RETENTION_DAYS', 365),
  };
}
