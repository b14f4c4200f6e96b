// A message of the local queue (queue.ts) and what its receive hands the handler: the SQS record, Lambda's reading of
// a partial batch response, and the function timeout.
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';

export interface Message {
  messageId: string;
  body: string;
  /** MessageGroupId: the tenant the fair share is about (journaled). */
  groupId?: string;
  md5OfBody: string;
  sentAt: number;
  firstReceiveAt?: number;
  receiveCount: number;
  availableAt: number;
  lastError?: string;
  /** Epoch ms before which a failed receive is not delivered again (ChangeMessageVisibility), else the backoff's. */
  visibleAt?: number;
  /** The receipt handle of its receive in flight. */
  receiptHandle?: string;
  /** keysOf(body), worked out once when the message is queued (never journaled). */
  keys: readonly string[];
}

/** The SQS record a receive hands the handler. */
export function sqsRecord(message: Message, receiptHandle: string, queueArn: string, region: string): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'AIDAIENQZJOLO23YVJ4VO',
      ApproximateFirstReceiveTimestamp: String(message.firstReceiveAt ?? message.sentAt),
      ...(message.groupId !== undefined ? { MessageGroupId: message.groupId } : {}),
    },
    messageAttributes: {},
    md5OfBody: message.md5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/** Lambda's partial batch response rules: an unknown or empty identifier fails the whole batch. */
export function failuresOf(batch: Message[], response: SQSBatchResponse | void, log: (line: string) => void): Map<Message, string> {
  const items = response && Array.isArray(response.batchItemFailures) ? response.batchItemFailures : [];
  const byId = new Map(batch.map((m) => [m.messageId, m]));
  const failed = new Map<Message, string>();
  for (const item of items) {
    const message = item?.itemIdentifier ? byId.get(item.itemIdentifier) : undefined;
    if (!message) {
      log(`[queue] invalid batchItemFailures identifier ${JSON.stringify(item)}: the whole batch fails`);
      return new Map(batch.map((m) => [m, 'invalid batchItemFailures identifier']));
    }
    failed.set(message, 'reported in batchItemFailures');
  }
  return failed;
}

export const groupField = (groupId: string | undefined): { groupId?: string } => (groupId === undefined ? {} : { groupId });

export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`invocation timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
