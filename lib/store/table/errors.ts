// Failures of the store's reads, in their own module so that code which only maps them does
// not pull the queries, and the IAM actions they need, into a function's bundle. A closed batch refusing an upload is
// lib/errors.ts's BatchClosedError, the same failure the API answers.
import { IceCatError } from '../../errors';

export class QueryError extends IceCatError {
  override name = 'QueryError';
  readonly code: string = 'query_failed';
}

/** DynamoDB kept refusing for lack of capacity after the SDK's and our own retries. */
export class StoreThrottledError extends QueryError {
  override name = 'StoreThrottledError';
  override readonly code: string = 'throttled';
}

/** The batch is being erased (DELETE) or is gone: nothing of an upload may be written into it. */
export class BatchErasedError extends IceCatError {
  override name = 'BatchErasedError';
  readonly code = 'batch_erased';
}

/** A review kept finding its image changed by other writes (reviews of it at the same moment): nothing was written. */
export class ReviewConflictError extends IceCatError {
  override name = 'ReviewConflictError';
  readonly code = 'review_conflict';
}
