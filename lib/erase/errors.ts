import { IceCatError } from '../errors';

/** Some objects or items outlasted their retries; running the erasure again finishes it. */
export class EraseIncompleteError extends IceCatError {
  override name = 'EraseIncompleteError';
  readonly code: string = 'erase_incomplete';
  readonly keys: unknown[];

  constructor(message: string, opts: { keys: unknown[]; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.keys = opts.keys;
  }
}
