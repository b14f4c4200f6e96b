// Failures the API's operations report. They name what went wrong in the domain, each with its stable code
// (lib/errors.ts); lib/http/middleware.ts is the one place that turns codes into HTTP statuses and bodies.
import { IceCatError, type IceCatErrorOptions } from '../errors';

/** A request parameter, path segment or body field is malformed; `parameter` names it, and the message starts with it. */
export class InvalidParameterError extends IceCatError {
  override name = 'InvalidParameterError';
  readonly code: string = 'invalid_parameter';
  readonly parameter: string;
  constructor(message: string, options: IceCatErrorOptions & { parameter: string }) {
    super(`${options.parameter}: ${message}`, options);
    this.parameter = options.parameter;
  }
}

/** The body is not a JSON document. */
export class MalformedBodyError extends IceCatError {
  override name = 'MalformedBodyError';
  readonly code: string = 'malformed_body';
}

/** A batch or image the client cannot see: missing, expired, or another client's (the same answer for all three). */
export class NotFoundError extends IceCatError {
  override name = 'NotFoundError';
  readonly code: string = 'not_found';
}

export class BatchNotFoundError extends NotFoundError {
  override name = 'BatchNotFoundError';
  readonly batchId: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string }) {
    super(message, options);
    this.batchId = options.batchId;
  }
}

export class ImageNotFoundError extends NotFoundError {
  override name = 'ImageNotFoundError';
  readonly batchId: string;
  readonly fprint: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string; fprint: string }) {
    super(message, options);
    this.batchId = options.batchId;
    this.fprint = options.fprint;
  }
}

export class RouteNotFoundError extends NotFoundError {
  override name = 'RouteNotFoundError';
  readonly method: string;
  readonly path: string;
  constructor(message: string, options: IceCatErrorOptions & { method: string; path: string }) {
    super(message, options);
    this.method = options.method;
    this.path = options.path;
  }
}

/** A declared upload is larger than the service accepts; the message starts with the parameter that declared it. */
export class FileTooLargeError extends IceCatError {
  override name = 'FileTooLargeError';
  readonly code: string = 'file_too_large';
  readonly parameter: string;
  readonly size: number;
  readonly max: number;
  constructor(message: string, options: IceCatErrorOptions & { parameter: string; size: number; max: number }) {
    super(`${options.parameter}: ${message}`, options);
    this.parameter = options.parameter;
    this.size = options.size;
    this.max = options.max;
  }
}

/** The client already has a batch of that name (or, for a generated ULID, practically never). */
export class BatchExistsError extends IceCatError {
  override name = 'BatchExistsError';
  readonly code: string = 'batch_exists';
  readonly batchId: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string }) {
    super(message, options);
    this.batchId = options.batchId;
  }
}

/**
 * The name is that of a batch the client no longer has (expired, or deleted) whose erasure is not over yet: the name
 * is free again once it is.
 */
export class BatchErasingError extends IceCatError {
  override name = 'BatchErasingError';
  readonly code: string = 'batch_erasing';
  readonly batchId: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string }) {
    super(message, options);
    this.batchId = options.batchId;
  }
}

/** Re-thresholding waits until the batch is done: until then the ingest sets the cat flags itself. */
export class BatchNotDoneError extends IceCatError {
  override name = 'BatchNotDoneError';
  readonly code: string = 'batch_not_done';
  readonly batchId: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string }) {
    super(message, options);
    this.batchId = options.batchId;
  }
}

/** POST …/audit on a batch with no classified (`success`) image: there is nothing to draw from. */
export class NothingToAuditError extends IceCatError {
  override name = 'NothingToAuditError';
  readonly code: string = 'nothing_to_audit';
  readonly batchId: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string }) {
    super(message, options);
    this.batchId = options.batchId;
  }
}

/** :close said fewer files than have already arrived. */
export class ExpectedBelowTotalError extends IceCatError {
  override name = 'ExpectedBelowTotalError';
  readonly code: string = 'expected_below_total';
  readonly expected: number;
  readonly total: number;
  constructor(message: string, options: IceCatErrorOptions & { expected: number; total: number }) {
    super(message, options);
    this.expected = options.expected;
    this.total = options.total;
  }
}

/** A review of a `fail` record: the image was never classified, so there is no verdict to correct. */
export class ImageFailedError extends IceCatError {
  override name = 'ImageFailedError';
  readonly code = 'image_failed';
  readonly fprint: string;
  readonly errorCode: string | undefined;
  constructor(message: string, options: IceCatErrorOptions & { fprint: string; errorCode: string | undefined }) {
    super(message, options);
    this.fprint = options.fprint;
    this.errorCode = options.errorCode;
  }
}

/** A review of an image still being classified: the machine has no verdict yet; review it once it has one. */
export class ImageNotClassifiedError extends IceCatError {
  override name = 'ImageNotClassifiedError';
  readonly code = 'image_not_classified';
  readonly fprint: string;
  constructor(message: string, options: IceCatErrorOptions & { fprint: string }) {
    super(message, options);
    this.fprint = options.fprint;
  }
}
