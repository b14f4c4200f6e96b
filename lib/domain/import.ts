// An import: the source a batch classifies images where they are, its progress, and how the summary shows it.
/** Where an import's keys come from: a bucket and prefix, or a manifest (a Batch Operations CSV or an Inventory manifest.json). */
export type ImportSource = { bucket: string; prefix: string } | { manifest: string };

export const IMPORT_STATES = ['listing', 'waiting-for-quota', 'listed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

/** An import's progress, on its batch's summary. */
export interface ImportProgress {
  state: ImportState;
  /** Keys listed so far (images and others). */
  listed: number;
  /** Images sent to the uploads queue (each counted against the images quota as it was sent). */
  enqueued: number;
  /** Keys listed that are not images by name (and folder markers): never enqueued. */
  skipped: number;
  /** Epoch ms: when an import waiting for the quota goes on (the next UTC midnight). */
  resumesAt?: number;
}

/** An import's progress as a client reads it. */
export interface ImportSummary {
  source: ImportSource;
  state: ImportState;
  listed: number;
  enqueued: number;
  skipped: number;
  resumesAt: string | null;
}
