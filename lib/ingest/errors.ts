// Why an upload could not be classified. A RejectedUpload is the upload's fault and ends in a `fail` record;
// anything else is treated as transient and retried by SQS.
import type { Claim } from '../store/writes';

/** A claim this run holds, with the upload time it keeps (a takeover keeps the first receipt's). */
export interface HeldClaim {
  claim: Claim;
  uploadedAt: number;
}

export type RejectionCode =
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
  | 'DetectionRejected';

/** The upload itself is bad: recorded as `fail` with this code, never retried. */
export class RejectedUpload extends Error {
  override name = 'RejectedUpload';
  constructor(
    readonly code: RejectionCode,
    message: string,
    options?: { cause?: unknown; claim?: HeldClaim },
  ) {
    super(message, options);
    this.claim = options?.claim;
  }

  /** Set when the upload held a claim on its image: its record is that claimed record, finished as `fail`. */
  readonly claim: HeldClaim | undefined;
}
