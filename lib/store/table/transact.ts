// TransactWriteItems as the ingest sends it: a cancellation only for a TransactionConflict (another transaction or
// write on one of its items at the same moment: every image of a batch moves the same summary item) is tried again
// in process, with jittered exponential backoff, a bounded number of rounds. The SDK does not retry it, and a message
// handed back to the queue for it waits out the visibility timeout (721 s on AWS). A condition that failed is an
// answer, not a conflict: it is never retried here.

import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  type PutCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { type BackoffPolicy, backoffDelay } from '../../backoff';

/** Rounds in all (the first included), and the waits between them: ~1.5 s at most in all. */
export const CONFLICT_ROUNDS = 6;
export const CONFLICT_BACKOFF: BackoffPolicy = { baseDelayMs: 20, maxDelayMs: 500 };

/** A cancellation for a conflict only: no condition of the transaction failed. */
export const conflictOnly = (err: unknown): boolean => {
  if (!(err instanceof TransactionCanceledException)) return false;
  const codes = (err.CancellationReasons ?? []).map((r) => r.Code);
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
};

/** Writes that must land together, as one TransactWriteItems. */
export function transaction(...writes: (UpdateCommandInput | PutCommandInput)[]): TransactWriteCommandInput {
  return {
    TransactItems: writes.map((w) => {
      const { ReturnValues: _ignored, ...rest } = w as UpdateCommandInput;
      return 'Item' in w ? { Put: rest as never } : { Update: rest as never };
    }),
  };
}

/** Sends the transaction, again after a conflict, up to CONFLICT_ROUNDS times; the last conflict is thrown. */
export async function transactWrite(
  ddb: DynamoDBDocumentClient,
  input: TransactWriteCommandInput,
  policy: BackoffPolicy = CONFLICT_BACKOFF,
): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      await ddb.send(new TransactWriteCommand(input));
      return;
    } catch (err) {
      if (!conflictOnly(err) || round + 1 >= CONFLICT_ROUNDS) throw err;
      await sleep(backoffDelay(round, policy));
    }
  }
}
