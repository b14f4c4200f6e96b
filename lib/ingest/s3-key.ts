import { ID_PATTERN, ID_RULE } from '../ids';
import { DECODED_REJECTIONS, RejectedUploadError } from './errors';

export interface BatchFile {
  clientId: string;
  batchId: string;
  /** Everything after the batch: may hold '/' when a folder was uploaded. */
  fileName: string;
}

export const UPLOAD_PREFIX = 'uploads/';

/** S3 event keys are form-encoded: spaces arrive as '+', a '+' as %2B, UTF-8 percent-encoded. */
export function decodeS3Key(encoded: string): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch (cause) {
    throw new RejectedUploadError(`object key is not valid URL encoding: ${encoded}`, { code: 'InvalidKey', cause });
  }
}

/** uploads/{clientId}/{batchId}/{fileName} */
export function parseUploadKey(key: string): BatchFile {
  const rest = key.startsWith(UPLOAD_PREFIX) ? key.slice(UPLOAD_PREFIX.length) : undefined;
  const [clientId = '', batchId = '', ...name] = rest?.split('/') ?? [];
  const fileName = name.join('/');
  if (rest === undefined || !ID_PATTERN.test(clientId) || !ID_PATTERN.test(batchId) || fileName === '' || fileName.endsWith('/')) {
    throw new RejectedUploadError(`object key "${key}" is outside the layout uploads/{clientId}/{batchId}/{fileName} (ids: ${ID_RULE})`, {
      code: 'InvalidKey',
    });
  }
  return { clientId, batchId, fileName };
}

/** The key's client, batch and file name, or undefined for a key outside the layout. */
export function tryParseUploadKey(key: string): BatchFile | undefined {
  try {
    return parseUploadKey(key);
  } catch (err) {
    if (err instanceof RejectedUploadError) return undefined;
    throw err;
  }
}

/** The batches upload keys belong to, each once, in the order first met; a key outside the layout belongs to none. */
export function batchesOfKeys(keys: Iterable<string>): { clientId: string; batchId: string }[] {
  const batches = new Map<string, { clientId: string; batchId: string }>();
  for (const key of keys) {
    const upload = tryParseUploadKey(key);
    const id = upload && `${upload.clientId}/${upload.batchId}`;
    if (upload && id && !batches.has(id)) batches.set(id, { clientId: upload.clientId, batchId: upload.batchId });
  }
  return [...batches.values()];
}

/** Where a handled upload rests. */
type RestingPlace = 'processed' | 'duplicates' | 'failed';

const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', tiff: 'tif', heif: 'heic', avif: 'avif' };

/** Where an upload rests once handled (docs/design.md §1 step 7). */
export function restingKey(place: RestingPlace, upload: BatchFile, fprint?: string, format?: string): string {
  const base = `${place}/${upload.clientId}/${upload.batchId}`;
  if (place === 'processed' && fprint) return `${base}/${fprint}.${(format && EXTENSIONS[format]) ?? 'bin'}`;
  if (place === 'duplicates' && fprint) return `${base}/${fprint}/${upload.fileName}`;
  return `${base}/${upload.fileName}`;
}

/** A key outside the layout has no client or batch: it rests under failed/_invalid/ with its whole key. */
export const invalidKeyDestination = (key: string): string => `failed/_invalid/${key}`;

/** thumbnails/{clientId}/{batchId}/{fprint}.webp: beside processed/, under the record's own fprint (a `fail-…` one too). */
export const thumbnailKey = (batch: { clientId: string; batchId: string }, fprint: string): string =>
  `thumbnails/${batch.clientId}/${batch.batchId}/${fprint}.webp`;

/**
 * A record whose pixels the ingest decoded has a thumbnail: every success (and so every image duplicates point at),
 * and the failures rejected after the decode. Told by fields every index projects, so every listing can answer it.
 */
export const hasThumbnail = (image: { status: string; errorCode?: string }): boolean =>
  image.status === 'success' || (image.status === 'fail' && image.errorCode !== undefined && DECODED_REJECTIONS.has(image.errorCode));
