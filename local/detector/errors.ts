// Rekognition's errors as the detector answers them: the `__type` the SDK turns into its exception
// classes, and the HTTP status Rekognition uses (ThrottlingException is a server fault there: 500).
import { LocalStackError } from '../errors';

export type RekognitionErrorType =
  | 'InvalidImageFormatException'
  | 'ImageTooLargeException'
  | 'InvalidParameterException'
  | 'InvalidS3ObjectException'
  | 'ThrottlingException'
  | 'ProvisionedThroughputExceededException'
  | 'InternalServerError'
  | 'UnknownOperationException'
  | 'SerializationException';

const STATUS: Record<RekognitionErrorType, number> = {
  InvalidImageFormatException: 400,
  ImageTooLargeException: 400,
  InvalidParameterException: 400,
  InvalidS3ObjectException: 400,
  ThrottlingException: 500,
  ProvisionedThroughputExceededException: 400,
  InternalServerError: 500,
  UnknownOperationException: 400,
  SerializationException: 400,
};

// The project's one constructor shape (lib/errors.ts): the message first, what the error is about named in `options`.
export class DetectorError extends LocalStackError {
  override name = 'DetectorError';
  readonly code = 'detector_error';
  readonly status: number;

  readonly type: RekognitionErrorType;

  constructor(message: string, options: { type: RekognitionErrorType; cause?: unknown }) {
    super(message, options);
    this.type = options.type;
    this.status = STATUS[options.type];
  }
}

export class InvalidImageFormatError extends DetectorError {
  override name = 'InvalidImageFormatError';
  constructor(message = 'Request has invalid image format', options?: { cause?: unknown }) {
    super(message, { ...options, type: 'InvalidImageFormatException' });
  }
}

export class ImageTooLargeError extends DetectorError {
  override name = 'ImageTooLargeError';
  constructor(message = 'Image size is too large.') {
    super(message, { type: 'ImageTooLargeException' });
  }
}

export class DetectorParameterError extends DetectorError {
  override name = 'DetectorParameterError';
  constructor(message = 'Request has invalid parameters') {
    super(message, { type: 'InvalidParameterException' });
  }
}

export class InvalidS3ObjectError extends DetectorError {
  override name = 'InvalidS3ObjectError';
  constructor(
    message = 'Unable to get object metadata from S3. Check object key, region and/or access permissions.',
    options?: { cause?: unknown },
  ) {
    super(message, { ...options, type: 'InvalidS3ObjectException' });
  }
}

export class ThrottlingError extends DetectorError {
  override name = 'ThrottlingError';
  constructor(message = 'Slow down! Rate exceeded (injected by the local detector).') {
    super(message, { type: 'ThrottlingException' });
  }
}

export class ThroughputExceededError extends DetectorError {
  override name = 'ThroughputExceededError';
  constructor(message = 'Provisioned rate exceeded: the local detector has too many requests in progress.') {
    super(message, { type: 'ProvisionedThroughputExceededException' });
  }
}
