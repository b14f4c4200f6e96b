// The batch summary's `imp` map: an import's source, progress and the lister's checkpoint (docs/design.md §16).
import type { SourceObject } from '../../domain/image';
import type { ImportSource, ImportState } from '../../domain/import';

/** `cursor`: where the page being listed starts (a continuation token, a manifest position). */
export interface StoredImport {
  source: ImportSource;
  state: ImportState;
  listed?: number;
  enqueued?: number;
  skipped?: number;
  resumesAt?: number;
  cursor?: string;
  /** Objects listed before the cursor that the quota refused: sent first when the listing goes on (lib/import/lister.ts). */
  held?: SourceObject[];
  /** On AWS: the S3 Batch Operations job listing the source, and which of the batch's jobs it is (import-jobs.ts). */
  jobId?: string;
  attempt?: number;
}
