// Failures the API's operations report. They name what went wrong in the domain; lib/api/http-errors.ts is the one
// place that turns them (and every other error) into an HTTP status and body.

export class ApiError extends Error {
  override name = 'ApiError';
  /** Stable, machine-readable code shown to the client. */
  readonly code: string = 'api_error';
}

/** A request parameter, path segment or body field is malformed; `parameter` names it. */
export class InvalidParameterError extends ApiError {
  override name = 'InvalidParameterError';
  override readonly code = 'invalid_parameter';
  constructor(
    readonly parameter: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${parameter}: ${message}`, options);
  }
}

/** The body is not a JSON document. */
export class MalformedBodyError extends ApiError {
  override name = 'MalformedBodyError';
  override readonly code = 'malformed_body';
}

/** A batch or image the client cannot see: missing, expired, or another client's (the same answer for all three). */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  override readonly code = 'not_found';
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
export class FileTooLargeError extends ApiError {
  override name = 'FileTooLargeError';
  override readonly code = 'file_too_large';
  constructor(
    readonly parameter: string,
    size: number,
    max: number,
  ) {
    super(`${parameter}: ${size} bytes is more than the ${max} bytes accepted per file`);
  }
}

/** The client already has a batch of that name (or, for a generated ULID, practically never). */
export class BatchExistsError extends ApiError {
  override name = 'BatchExistsError';
  override readonly code = 'batch_exists';
  constructor(batchId: string) {
    super(`you already have a batch ${batchId}`);
  }
}

/**
 * The name is that of a batch the client no longer has (expired, or deleted) whose erasure is not over yet: the name
 * is free again once it is.
 */
export class BatchErasingError extends ApiError {
  override name = 'BatchErasingError';
  override readonly code = 'batch_erasing';
  constructor(batchId: string) {
    super(`batch ${batchId} expired or was deleted and is being erased; its name can be used again once that is done, try again shortly`);
  }
}

/** The batch takes no more uploads or declarations. */
export class BatchClosedError extends ApiError {
  override name = 'BatchClosedError';
  override readonly code = 'batch_closed';
  constructor(batchId: string) {
    super(`batch ${batchId} is closed`);
  }
}

/** Re-thresholding waits until the batch is done: until then the ingest sets the cat flags itself. */
export class BatchNotDoneError extends ApiError {
  override name = 'BatchNotDoneError';
  override readonly code = 'batch_not_done';
  constructor(batchId: string) {
    super(`batch ${batchId} is still open or processing; re-threshold it once it is done`);
  }
}

/** :close said fewer files than have already arrived. */
export class ExpectedBelowTotalError extends ApiError {
  override name = 'ExpectedBelowTotalError';
  override readonly code = 'expected_below_total';
  constructor(expected: number, total: number) {
    super(`expected: ${expected} is fewer than the ${total} uploads that already arrived`);
  }
}

/** A review of a `fail` record: the image was never classified, so there is no verdict to correct. */
export class ImageFailedError extends ApiError {
  override name = 'ImageFailedError';
  override readonly code = 'image_failed';
  constructor(fprint: string, errorCode: string | undefined) {
    super(`image ${fprint} failed (${errorCode ?? 'unknown error'}): it has no verdict to review`);
  }
}

/** A review of an image still being classified: the machine has no verdict yet; review it once it has one. */
export class ImageNotClassifiedError extends ApiError {
  override name = 'ImageNotClassifiedError';
  override readonly code = 'image_not_classified';
  constructor(fprint: string) {
    super(`image ${fprint} is still being classified; review it once it is (its status is then success)`);
  }
}
