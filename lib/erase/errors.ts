/** Some objects or items outlasted their retries; running the erasure again finishes it. */
export class EraseIncompleteError extends Error {
  override name = 'EraseIncompleteError';
  readonly keys: unknown[];

  constructor(message: string, opts: { keys: unknown[]; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.keys = opts.keys;
  }
}
