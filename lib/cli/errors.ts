// The CLI's failures, each with the exit code it ends the process with (0 success, 2 some files failed, 1 usage,
// authentication or network, as docs/design.md §7 sets).

export const EXIT = { ok: 0, failure: 1, someFailed: 2, interrupted: 130 } as const;

export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number = EXIT.failure;
}

/** Bad arguments or configuration. */
export class UsageError extends CliError {
  override name = 'UsageError';
}

/** The API refused the key. */
export class AuthError extends CliError {
  override name = 'AuthError';
}

/** No answer from the API (or S3) after every retry. */
export class NetworkError extends CliError {
  override name = 'NetworkError';
}

/** The API answered an error; `code` and `status` as it said them. */
export class ApiError extends CliError {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The API has no such route: a server older than this CLI. */
export class RouteMissingError extends ApiError {
  override name = 'RouteMissingError';
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(404, 'route_not_found', `this API does not offer ${method} ${path} yet (route not found): it needs a newer IceCatWrangler server`);
  }
}

/**
 * The service answered that it is out of storage space (HTTP 507, or a 5xx saying so, as the local stack's S3 does):
 * retrying now cannot help, so the run stops sending and says which files did not go.
 */
export class OutOfSpaceError extends CliError {
  override name = 'OutOfSpaceError';
  override readonly exitCode: number = EXIT.someFailed;
  constructor(
    /** The service that refused: the API, or S3. */
    readonly service: string,
    message: string,
  ) {
    super(`${service}: ${message}`);
  }
}

/** Whether an error answer says the service has no room left (pure). */
export const saysOutOfSpace = (status: number, code: string, message: string): boolean =>
  status === 507 || code === 'insufficient_storage' || (status >= 500 && /out of (disk |storage )?space|no space left/i.test(message));
