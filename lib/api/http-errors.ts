// The one place where errors become HTTP answers: {"error": {"code", "message"}}. Messages are shown only below
// 500; anything unrecognised is a bug, answered 500 with a fixed message and logged by the caller.
import { AuthError } from '../auth/api-keys';
import { CursorError } from '../store/cursor';
import { ReviewConflictError, StoreThrottledError } from '../store/errors';
import {
  ApiError,
  BatchClosedError,
  BatchNotDoneError,
  BatchErasingError,
  BatchExistsError,
  ExpectedBelowTotalError,
  FileTooLargeError,
  ImageFailedError,
  ImageNotClassifiedError,
  InvalidParameterError,
  MalformedBodyError,
  NotFoundError,
} from './errors';

export interface HttpErrorAnswer {
  status: number;
  code: string;
  message: string;
}

export const INTERNAL_ERROR: HttpErrorAnswer = { status: 500, code: 'internal_error', message: 'internal error' };

export function toHttpError(err: unknown): HttpErrorAnswer {
  if (err instanceof InvalidParameterError || err instanceof MalformedBodyError) {
    return { status: 400, code: err.code, message: err.message };
  }
  if (err instanceof CursorError) return { status: 400, code: 'invalid_cursor', message: `cursor: ${err.message}` };
  if (err instanceof AuthError) return { status: 401, code: 'unauthorized', message: err.message };
  if (err instanceof NotFoundError) return { status: 404, code: err.code, message: err.message };
  if (
    err instanceof BatchExistsError ||
    err instanceof BatchErasingError ||
    err instanceof BatchClosedError ||
    err instanceof BatchNotDoneError ||
    err instanceof ExpectedBelowTotalError ||
    err instanceof ImageFailedError ||
    err instanceof ImageNotClassifiedError
  ) {
    return { status: 409, code: err.code, message: err.message };
  }
  if (err instanceof ReviewConflictError) return { status: 409, code: 'review_conflict', message: err.message };
  if (err instanceof FileTooLargeError) return { status: 413, code: err.code, message: err.message };
  if (err instanceof StoreThrottledError) return { status: 429, code: 'throttled', message: 'too many requests; retry later' };
  if (err instanceof ApiError) return { status: 400, code: err.code, message: err.message };
  if (isOutOfStorage(err)) return OUT_OF_STORAGE;
  return INTERNAL_ERROR;
}

export const OUT_OF_STORAGE: HttpErrorAnswer = {
  status: 507,
  code: 'insufficient_storage',
  message: 'the service is out of storage space: nothing was changed; retry once space is freed',
};

/**
 * A store that refused a write for lack of disk space: the one-machine stack's DynamoDB (dynalite) answers
 * InternalServerError saying so (docs/design.md, "A full disk"); AWS's never does.
 */
function isOutOfStorage(err: unknown): boolean {
  const { name, message } = (err ?? {}) as { name?: unknown; message?: unknown };
  return name === 'InternalServerError' && typeof message === 'string' && /no space left on device|out of disk space/i.test(message);
}

export const errorBody = (answer: HttpErrorAnswer): string =>
  JSON.stringify({ error: { code: answer.code, message: answer.message } });
