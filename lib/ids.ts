// Names and name rules shared by the ingest, the API, the CLI and the local detector, defined once.

/** Client and batch ids: S3 key segments (uploads/{clientId}/{batchId}/…) and the table's partition prefix. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const ID_RULE = '1-64 of A-Z a-z 0-9 _ -';

/** A file name in a batch holds a control character (C0 or DEL) or a backslash: refused. */
export const hasForbiddenFileNameCharacters = (name: string): boolean =>
  [...name].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f' || c === '\\');

/** A file name in a batch has an empty, "." or ".." '/'-segment (it would leave, or blur, the batch's folder): refused. */
export const hasInvalidPathSegment = (name: string): boolean => name.split('/').some((s) => s === '' || s === '.' || s === '..');

/** Rekognition's image limits for DetectLabels. */
export const REKOGNITION_LIMITS = {
  /** Image bytes sent inline. */
  maxBytes: 5 * 1024 * 1024,
  /** Image read by S3Object reference (the local detector's limit; the ingest always sends bytes, docs/design.md §1). */
  maxS3Bytes: 15 * 1024 * 1024,
  minSide: 80,
  maxSide: 10_000,
  /** Formats it reads as they are (as Bytes or by reference); anything else is converted to JPEG first. */
  byReference: new Set(['jpeg', 'png']),
  defaultMinConfidence: 55,
  defaultMaxLabels: 1000,
} as const;
