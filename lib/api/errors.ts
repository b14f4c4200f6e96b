// Failures the API's operations report. They name what went wrong in the domain, each with its stable code
// (lib/errors.ts); lib/http/middleware.ts is the one place that turns codes into HTTP statuses and bodies.
import { IceCatError } from '../errors';

/** A request parameter, path segment or body field is malformed; `parameter` names it. */
export class InvalidParameterError extends IceCatError {
  override name = 'InvalidParameterError';
  readonly code: string = 'invalid_parameter';
  constructor(
    readonly parameter: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${parameter}: ${message}`, options);
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
  constructor(batchId: string) {
    super(`batch ${batchId} not found`);
  }
}

export class ImageNotFoundError extends NotFoundError {
  override name = 'ImageNotFoundError';
  constructor(batchId: string, fprint: string) {
    super(`image ${fprint} not found in batch ${batchId}`);
  }
}

export class RouteNotFoundError extends NotFoundError {
  override name = 'RouteNotFoundError';
  constructor(method: string, path: string) {
    super(`no route ${method} ${path}`);
  }
}

/** A declared upload is larger than the service accepts. */
export class FileTooLargeError extends IceCatError {
  override name = 'FileTooLargeError';
  readonly code: string = 'file_too_large';
  constructor(
    readonly parameter: string,
    size: number,
    max: number,
  ) {
    super(`${parameter}: ${size} bytes is more than the ${max} bytes accepted per file`);
  }
}

/** The client already has a batch of that name (or, for a generated ULID, practically never). */
export class BatchExistsError extends IceCatError {
  override name = 'BatchExistsError';
  readonly code: string = 'batch_exists';
  constructor(batchId: string) {
    super(`you already have a batch ${batchId}`);
  }
}

/**
 * The name is that of a batch the client no longer has (expired, or deleted) whose erasure is not over yet: the name
 * is free again once it is.
 */
export class BatchErasingError extends IceCatError {
  override name = 'BatchErasingError';
  readonly code: string = 'batch_erasing';
  constructor(batchId: string) {
    super(`batch ${batchId} expired or was deleted and is being erased; its name can be used again once that is done, try again shortly`);
  }
}

/** Re-thresholding waits until the batch is done: until then the ingest sets the cat flags itself. */
export class BatchNotDoneError extends IceCatError {
  override name = 'BatchNotDoneError';
  readonly code: string = 'batch_not_done';
  constructor(batchId: string) {
    super(`batch ${batchId} is still open or processing; re-threshold it once it is done`);
  }
}

/** :close said fewer files than have already arrived. */
export class ExpectedBelowTotalError extends IceCatError {
  override name = 'ExpectedBelowTotalError';
  readonly code: string = 'expected_below_total';
  constructor(expected: number, total: number) {
    super(`expected: ${expected} is fewer than the ${total} uploads that already arrived`);
  }
}

/** A review of a `fail` record: the image was never classified, so there is no verdict to correct. */
export class ImageFailedError extends IceCatError {
  override name = 'ImageFailedError';
  readonly code = 'image_failed';
  constructor(fprint: string, errorCode: string | undefined) {
    super(`image ${fprint} failed (${errorCode ?? 'unknown error'}): it has no verdict to review`);
  }
}

/** A review of an image still being classified: the machine has no verdict yet; review it once it has one. */
export class ImageNotClassifiedError extends IceCatError {
  override name = 'ImageNotClassifiedError';
  readonly code = 'image_not_classified';
  constructor(fprint: string) {
    super(`image ${fprint} is still being classified; review it once it is (its status is then success)`);
  }
}
