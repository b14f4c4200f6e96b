// The API's configuration: the shared settings of lib/config.ts plus what only the API needs. Required values fail
// fast at cold start, naming the variable.
import { ConfigError, envNumber, loadConfig, type Config } from '../config';
import { MIN_CURSOR_SECRET_LENGTH } from '../store/cursor';

export interface ApiConfig extends Config {
  /** Lifetime of the presigned POST forms POST /v1/batches hands out. */
  uploadExpiresSeconds: number;
  /** Most files one POST /v1/batches may declare. */
  maxFilesPerBatch: number;
  /** How long a container trusts an API key it has looked up. */
  apiKeyCacheMs: number;
}

const integer = (name: string, fallback: number, min: number, max: number): number =>
  envNumber(name, fallback, { min, max, integer: true });

/**
 * The HMAC key of paging cursors (CURSOR_SECRET; on AWS a generated Secrets Manager secret, see serverless.yml). Only
 * the read function pages, so only it is given the secret.
 */
export function loadCursorSecret(): string {
  const cursorSecret = process.env.CURSOR_SECRET ?? '';
  if (cursorSecret === '') throw new ConfigError('missing required environment variable CURSOR_SECRET');
  if (cursorSecret.length < MIN_CURSOR_SECRET_LENGTH) {
    throw new ConfigError(`environment variable CURSOR_SECRET must be at least ${MIN_CURSOR_SECRET_LENGTH} characters`);
  }
  return cursorSecret;
}

export function loadApiConfig(): ApiConfig {
  return {
    ...loadConfig(),
    // S3 caps a presigned POST policy at 7 days.
    uploadExpiresSeconds: integer('UPLOAD_EXPIRES_SECONDS', 900, 60, 7 * 86400),
    maxFilesPerBatch: integer('MAX_FILES_PER_BATCH', 500, 1, 1000),
    apiKeyCacheMs: integer('API_KEY_CACHE_MS', 60_000, 0, 3_600_000),
  };
}
