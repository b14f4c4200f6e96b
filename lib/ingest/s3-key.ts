import { RejectedUpload } from './errors';

export interface UploadKey {
  clientId: string;
  batchId: string;
  /** Everything after the batch: may hold '/' when a folder was uploaded. */
  fileName: string;
}

export const UPLOAD_PREFIX = 'uploads/';
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** S3 event keys are form-encoded: spaces arrive as '+', a '+' as %2B, UTF-8 percent-encoded. */
export function decodeS3Key(encoded: string): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch (cause) {
    throw new RejectedUpload('InvalidKey', `object key is not valid URL encoding: ${encoded}`, { cause });
  }
}

/** uploads/{clientId}/{batchId}/{fileName} */
export function parseUploadKey(key: string): UploadKey {
  const rest = key.startsWith(UPLOAD_PREFIX) ? key.slice(UPLOAD_PREFIX.length) : undefined;
  const [clientId = '', batchId = '', ...name] = rest?.split('/') ?? [];
  const fileName = name.join('/');
  if (rest === undefined || !ID.test(clientId) || !ID.test(batchId) || fileName === '' || fileName.endsWith('/')) {
    throw new RejectedUpload(
      'InvalidKey',
      `object key "${key}" is outside the layout uploads/{clientId}/{batchId}/{fileName} (ids: 1-64 of A-Z a-z 0-9 _ -)`,
    );
  }
  return { clientId, batchId, fileName };
}

export type Outcome = 'processed' | 'duplicates' | 'failed';

const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', tiff: 'tif', heif: 'heic', avif: 'avif' };

/** Where an upload rests once handled (DESIGN §1 step 7). */
export function restingKey(outcome: Outcome, upload: UploadKey, fprint?: string, format?: string): string {
  const base = `${outcome}/${upload.clientId}/${upload.batchId}`;
  if (outcome === 'processed' && fprint) return `${base}/${fprint}.${(format && EXTENSIONS[format]) ?? 'bin'}`;
  if (outcome === 'duplicates' && fprint) return `${base}/${fprint}/${upload.fileName}`;
  return `${base}/${upload.fileName}`;
}

/** A key outside the layout has no client or batch: it rests under failed/_invalid/ with its whole key. */
export const invalidKeyDestination = (key: string): string => `failed/_invalid/${key}`;
