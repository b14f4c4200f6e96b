// A person's verdict on an image, and the audit sample an image may be drawn into.
/**
 * A person's verdict on an image (docs/design.md §10): it wins over the machine's. `machineIsCat` is the detector's
 * verdict at the batch's threshold, kept beside it (a re-threshold moves it, never the person's).
 */
export interface Review {
  isCat: boolean;
  note?: string;
  /** Epoch ms. */
  reviewedAt: number;
  machineIsCat: boolean;
}

/** Longest review note kept. */
export const REVIEW_NOTE_MAX_CHARS = 500;

/** One image record: an upload with new pixels (or a refused upload) in a client's batch. */
/** The machine's verdict an audited image was drawn under (docs/accuracy.md). */
export type AuditStratum = 'cat' | 'notCat';

/** An image's place in its batch's audit sample (POST …/audit). */
export interface Audit {
  /** Epoch ms. */
  drawnAt: number;
  stratum: AuditStratum;
  /** The random key that orders the pending audit queue (12 hex digits). */
  order: string;
  /** The seed of the draw that took it. */
  seed: number;
}
