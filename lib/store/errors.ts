// Failures of the store's reads, in their own module so that code which only maps them (lib/api/http-errors.ts) does
// not pull the queries, and the IAM actions they need, into a function's bundle.

export class QueryError extends Error {
  override name = 'QueryError';
}

/** DynamoDB kept refusing for lack of capacity after the SDK's and our own retries. */
export class StoreThrottledError extends QueryError {
  override name = 'StoreThrottledError';
}

/** The batch is being erased (DELETE) or is gone: nothing of an upload may be written into it. */
export class BatchErasedError extends Error {
  override name = 'BatchErasedError';
}

/** The batch is closed and every file it was told of arrived: it takes no new upload (docs/design.md §6). */
export class BatchClosedError extends Error {
  override name = 'BatchClosedError';
}

/** A review kept finding its image changed by other writes (reviews of it at the same moment): nothing was written. */
export class ReviewConflictError extends Error {
  override name = 'ReviewConflictError';
}
