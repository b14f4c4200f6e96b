// Why an upload could not be classified. A RejectedUpload is the upload's fault and ends in a `fail` record;
// anything else is treated as transient and retried by SQS.

export type RejectionCode =
  | 'InvalidKey'
  | 'ForeignBatch'
  | 'EmptyFile'
  | 'FileTooLarge'
  | 'NotAnImage'
  | 'UnsupportedFormat'
  | 'CorruptImage'
  | 'TooManyPixels'
  | 'ImageTooSmall'
  | 'DetectionRejected';

export class IngestError extends Error {
  override name = 'IngestError';
}

/** The upload itself is bad: recorded as `fail` with this code, never retried. */
export class RejectedUpload extends IngestError {
  override name = 'RejectedUpload';
  constructor(
    readonly code: RejectionCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Another run owns the claim now (its lease expired and was taken over): this run's writes are void. */
export class ClaimLost extends IngestError {
  override name = 'ClaimLost';
}
