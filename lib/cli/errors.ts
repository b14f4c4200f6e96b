// The CLI's failures. Each carries a code of the one error family (lib/errors.ts): the API's own code when the API
// answered one, and the exit code comes from the code (0 success, 2 some files failed, the service is out of
// space or the client is beyond a daily quota, 1 usage, authentication, network or any other failure, as docs/design.md §7 sets).
import type { BatchSummary } from '../api/client-contract';
import { IceCatError, type IceCatErrorOptions } from '../errors';

export const EXIT = { ok: 0, failure: 1, someFailed: 2, interrupted: 130 } as const;

/** Exit codes by error code; every other code exits 1. */
const EXIT_BY_CODE: Readonly<Record<string, number>> = { insufficient_storage: EXIT.someFailed, quota_exceeded: EXIT.someFailed };

/** The exit code of a failure with this code. */
export const exitCodeFor = (code: string): number => EXIT_BY_CODE[code] ?? EXIT.failure;

/** A failure only the CLI meets (its arguments, the network, the API's answers as it reads them). */
abstract class CliError extends IceCatError {
  override name = 'CliError';
}

/** Bad arguments or configuration. */
export class UsageError extends CliError {
  override name = 'UsageError';
  readonly code: string = 'usage';
}

/** The API refused the key. */
export class KeyRefusedError extends CliError {
  override name = 'KeyRefusedError';
  readonly code: string = 'unauthorized';
}

/** No answer from the API (or S3) after every retry. */
export class NetworkError extends CliError {
  override name = 'NetworkError';
  readonly code: string = 'network';
}

/** The API answered an error; `code` and `status` as it said them. */
export class ApiAnswerError extends CliError {
  override name = 'ApiAnswerError';
  readonly status: number;
  readonly code: string;
  constructor(message: string, options: IceCatErrorOptions & { status: number; code: string }) {
    super(message, options);
    this.status = options.status;
    this.code = options.code;
  }
}

/** The API has no such route: a server older than this CLI. */
export class RouteMissingError extends ApiAnswerError {
  override name = 'RouteMissingError';
  readonly method: string;
  readonly path: string;
  constructor(message: string, options: IceCatErrorOptions & { method: string; path: string }) {
    super(message, { ...options, status: 404, code: 'route_not_found' });
    this.method = options.method;
    this.path = options.path;
  }
}

/**
 * The service answered that it is out of storage space (HTTP 507, or a 5xx saying so, as the local stack's S3 does):
 * retrying now cannot help, so the run stops sending and says which files did not go.
 */
export class OutOfSpaceError extends CliError {
  override name = 'OutOfSpaceError';
  readonly code: string = 'insufficient_storage';
  /** The service that refused: the API, or S3 (the message starts with it). */
  readonly service: string;
  constructor(message: string, options: IceCatErrorOptions & { service: string }) {
    super(`${options.service}: ${message}`, options);
    this.service = options.service;
  }
}

/** Whether an error answer says the service has no room left (pure). */
export const saysOutOfSpace = (status: number, code: string, message: string): boolean =>
  status === 507 || code === 'insufficient_storage' || (status >= 500 && /out of (disk |storage )?space|no space left/i.test(message));

/** --wait-timeout ran out: the message says where the batch stands, and `last` is its summary then. */
export class WaitTimeoutError extends CliError {
  override name = 'WaitTimeoutError';
  readonly code: string = 'wait_timeout';
  readonly last: BatchSummary;
  constructor(message: string, options: IceCatErrorOptions & { last: BatchSummary }) {
    super(message, options);
    this.last = options.last;
  }
}
