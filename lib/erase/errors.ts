import { IceCatError, type IceCatErrorOptions } from '../errors';

/** Some objects or items outlasted their retries; running the erasure again finishes it. */
export class EraseIncompleteError extends IceCatError {
  override name = 'EraseIncompleteError';
  readonly code: string = 'erase_incomplete';
  readonly keys: unknown[];

  constructor(message: string, options: IceCatErrorOptions & { keys: unknown[] }) {
    super(message, { cause: options.cause });
    this.keys = options.keys;
  }
}
