// The one error family of lib/ and functions/. Every failure the code names extends IceCatError and carries a stable
// `code`: the same string the API answers in {"error": {"code"}} (lib/http/middleware.ts maps codes to statuses),
// the CLI prints and turns into its exit code (lib/cli/errors.ts), and the logs show. `cause` keeps what it wraps.
// Domain layer: imports nothing of the project.
//
// One constructor shape for the whole family: `new XError(message, options)`. The message comes first and whole, as
// the client reads it; whatever the error is about (a batch id, a parameter, a status) is a named, typed field of
// `options` next to `cause`, kept on the error. No id or code is ever a positional argument, so a message cannot
// land where an id goes (test/types/error-shape.ts).

/** What every error of the family may be given besides its message: the error it wraps. */
export interface IceCatErrorOptions {
  cause?: unknown;
}

export abstract class IceCatError extends Error {
  override name = 'IceCatError';
  /** Stable and machine-readable: `batch_not_found`-style snake case, never reworded once shipped. */
  abstract readonly code: string;

  constructor(message: string, options?: IceCatErrorOptions) {
    super(message, options);
  }
}

/** The batch takes no more uploads or declarations: closed, and (for an upload) every file it was told of arrived. */
export class BatchClosedError extends IceCatError {
  override name = 'BatchClosedError';
  readonly code = 'batch_closed';
  readonly batchId: string;
  constructor(message: string, options: IceCatErrorOptions & { batchId: string }) {
    super(message, options);
    this.batchId = options.batchId;
  }
}

/** Some objects or items of a batch being erased outlasted their retries; running the erasure again finishes it. */
export class EraseIncompleteError extends IceCatError {
  override name = 'EraseIncompleteError';
  readonly code: string = 'erase_incomplete';
  readonly keys: unknown[];

  constructor(message: string, options: IceCatErrorOptions & { keys: unknown[] }) {
    super(message, { cause: options.cause });
    this.keys = options.keys;
  }
}
