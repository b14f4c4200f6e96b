// The one error family of lib/ and functions/. Every failure the code names extends IceCatError and carries a stable
// `code`: the same string the API answers in {"error": {"code"}} (lib/http/middleware.ts maps codes to statuses),
// the CLI prints and turns into its exit code (lib/cli/errors.ts), and the logs show. `cause` keeps what it wraps.
// Domain layer: imports nothing of the project.

export abstract class IceCatError extends Error {
  override name = 'IceCatError';
  /** Stable and machine-readable: `batch_not_found`-style snake case, never reworded once shipped. */
  abstract readonly code: string;
}

/** The batch takes no more uploads or declarations: closed, and (for an upload) every file it was told of arrived. */
export class BatchClosedError extends IceCatError {
  override name = 'BatchClosedError';
  readonly code = 'batch_closed';
  constructor(batchId: string, message = `batch ${batchId} is closed`, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Whether an error is of the family and carries `code`. */
export const hasCode = (err: unknown, code: string): boolean => err instanceof IceCatError && err.code === code;
