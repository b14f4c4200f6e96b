// The API's configuration: the shared settings of lib/config.ts plus what only the API needs. Required values fail
// fast at cold start, naming the variable.
import { envNumber, loadConfig, requiredSecret, type Config } from '../config';
import { MIN_CURSOR_SECRET_LENGTH } from '../store/cursor';

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
