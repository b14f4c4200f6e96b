// The record key of an upload refused before it had a fingerprint (lib/ingest/steps/reject.ts): XXH3-128 of its file
// name and ETag. The import report (lib/api/import-report.ts) finds such records by the same key; the native hash is
// required on the first call, so the batches bundle, which only may need it, loads no native code at start.
import type { XXHash128 as Hasher } from 'xxhash-addon';

let hasher: typeof Hasher | undefined;

export function rejectionKey(fileName: string, etag: string | undefined): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  hasher ??= (require('xxhash-addon') as typeof import('xxhash-addon')).XXHash128;
  return `fail-${hasher.hash(Buffer.from(etag === undefined ? fileName : `${fileName}\u0000${etag}`)).toString('hex')}`;
}
