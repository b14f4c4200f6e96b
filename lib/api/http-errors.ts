// The one place where errors become HTTP answers: {"error": {"code", "message"}}. Messages are shown only below
// 500; anything unrecognised is a bug, answered 500 with a fixed message and logged by the caller.
import { AuthError } from '../auth/api-keys';
import { CursorError } from '../store/cursor';
import { StoreThrottledError } from '../store/errors';
import {
  ApiError,
  BatchClosedError,
  BatchNotDoneError,
  BatchErasingError,
  BatchExistsError,
  ExpectedBelowTotalError,
  FileTooLargeError,
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
  if (err instanceof BatchExistsError || err instanceof BatchErasingError || err instanceof BatchClosedError || err instanceof BatchNotDoneError || err instanceof ExpectedBelowTotalError) {
    return { status: 409, code: err.code, message: err.message };
  }
  if (err instanceof FileTooLargeError) return { status: 413, code: err.code, message: err.message };
  if (err instanceof StoreThrottledError) return { status: 429, code: 'throttled', message: 'too many requests; retry later' };
  if (err instanceof ApiError) return { status: 400, code: err.code, message: err.message };
  return INTERNAL_ERROR;
}

export const errorBody = (answer: HttpErrorAnswer): string =>
  JSON.stringify({ error: { code: answer.code, message: answer.message } });
