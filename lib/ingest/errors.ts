// Why an upload could not be classified. A RejectedUploadError is the upload's fault and ends in a `fail` record;
// anything else is treated as transient and retried by SQS.
import type { Claim, Fingerprint } from '../domain/upload';
import { IceCatError, type IceCatErrorOptions } from '../errors';

/** A claim this run holds, with the upload time it keeps (a takeover keeps the first receipt's). */
export interface HeldClaim {
  readonly claim: Claim;
  readonly uploadedAt: number;
  /** Taken over from a run whose lease ended: that run may have kept the answer it paid for on the claim. */
  readonly takeover?: boolean;
}

/**
 * Why an upload ended `fail`: its record's `error.code`, as listings, exports and the CLI show it. These 13 shipped
 * in PascalCase and keep that spelling (a code is never reworded once shipped); a new one is snake_case like every
 * other error code (docs/decisions/0028-one-name-per-concept.md, held by test/unit/one-name.test.ts).
 */
type RejectionCode =
  | 'InvalidKey'
  | 'BatchClosed'
  | 'Overwritten'
  | 'EmptyFile'
  | 'FileTooLarge'
  | 'NotAnImage'
  | 'UnsupportedFormat'
  | 'CorruptImage'
  | 'TooManyPixels'
  | 'ImageTooSmall'
  | 'DetectionRejected'
  /** Its attempts did not finish (timeouts, out of memory, a fault that persisted): given up (docs/design.md §6). */
  | 'ProcessingFailed'
  /** A HEIF decode past its thread's time or memory cap (docs/design.md §12): the file asks more than any photo does. */
  | 'decode_limit_exceeded'
  /** Beyond its client's images quota of the UTC day (docs/design.md §11): kept under failed/, never classified. */
  | 'QuotaExceeded'
  /** An imported object whose ETag is no longer the one listed (docs/design.md §16): spelt as the contract names it. */
  | 'SourceChanged'
  /** An imported object (or the version listed) that is gone from its source. */
  | 'SourceMissing';

/** Rejections that come after the pixels were decoded: their record has a thumbnail (thumbnailKey). */
export const DECODED_REJECTIONS: ReadonlySet<string> = new Set<RejectionCode>(['ImageTooSmall', 'BatchClosed', 'DetectionRejected']);

/** The upload itself is bad: recorded as `fail` with this code, never retried. */
export class RejectedUploadError extends IceCatError {
  override name = 'RejectedUploadError';
  readonly code: RejectionCode;
  constructor(message: string, options: IceCatErrorOptions & { code: RejectionCode; claim?: HeldClaim; decoded?: Fingerprint }) {
    super(message, options);
    this.code = options.code;
    this.claim = options.claim;
    this.decoded = options.decoded;
  }

  /** The decoded image of a rejection before any claim (DECODED_REJECTIONS): its thumbnail is stored with the record. */
  readonly decoded: Fingerprint | undefined;

  /** Set when the upload held a claim on its image: its record is that claimed record, finished as `fail`. */
  readonly claim: HeldClaim | undefined;
}
