// The one way the store reads a condition that did not hold: a single write's (ConditionalCheckFailedException), or
// the write at an index of a cancelled transaction (its CancellationReasons), with the item that write found when it
// asked for it. Every entity's sender reads failures through these.
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/** A conditional write found its condition false. */
export const conditionFailed = (err: unknown): boolean => err instanceof ConditionalCheckFailedException;

/** The transaction failed because its write at `index` found its condition false. */
export const conditionFailedAt = (err: unknown, index: number): boolean =>
  err instanceof TransactionCanceledException && err.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed';

/** The item the transaction's write at `index` found, when that write asked for it (ReturnValuesOnConditionCheckFailure). */
export const foundAt = (err: unknown, index: number): Record<string, unknown> | undefined => {
  const item = err instanceof TransactionCanceledException ? err.CancellationReasons?.[index]?.Item : undefined;
  return item ? (fromAttributeValues({ M: item }) as Record<string, unknown>) : undefined;
};

/** A low-level AttributeValue as a plain value (a cancelled transaction's reasons are not unmarshalled for us). */
function fromAttributeValues(v: Record<string, unknown>): unknown {
  if ('N' in v) return Number(v.N);
  if ('S' in v) return v.S;
  if ('BOOL' in v) return v.BOOL;
  if ('NULL' in v) return null;
  if ('M' in v)
    return Object.fromEntries(Object.entries(v.M as Record<string, Record<string, unknown>>).map(([k, x]) => [k, fromAttributeValues(x)]));
  if ('L' in v) return (v.L as Record<string, unknown>[]).map(fromAttributeValues);
  if ('SS' in v) return new Set(v.SS as string[]);
  if ('NS' in v) return new Set((v.NS as string[]).map(Number));
  return undefined;
}
