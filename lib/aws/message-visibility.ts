// "Try this message again in N seconds": how the ingest hands a message back to its queue for a set time instead of
// the queue's own backoff (docs/design.md §6, a claim still leased). On AWS it is SQS ChangeMessageVisibility on the
// message's receipt handle, the message being reported in batchItemFailures; locally a LocalMessageVisibility, which
// the stack gives both to the ingest (through its deps) and to its queue (local/queue/queue.ts), which registers there and
// honours the same call for the receipt handles it gave out.
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';

export interface RetryLater {
  messageId: string;
  receiptHandle: string;
  delaySeconds: number;
}

export interface MessageVisibility {
  /** Makes each message visible again only after its delay; what cannot be changed keeps the queue's timeout. */
  retryLater(messages: RetryLater[], log: (message: string, details: Record<string, unknown>) => void): Promise<void>;
}

/** SQS's longest visibility timeout (12 hours). */
const MAX_VISIBILITY_SECONDS = 43_200;

const visibilitySeconds = (delay: number): number => Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(delay)));

/** ChangeMessageVisibilityBatch takes at most 10 entries. */
const BATCH_MAX = 10;

export class SqsMessageVisibility implements MessageVisibility {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async retryLater(messages: RetryLater[], log: (message: string, details: Record<string, unknown>) => void): Promise<void> {
    for (let i = 0; i < messages.length; i += BATCH_MAX) {
      const chunk = messages.slice(i, i + BATCH_MAX);
      try {
        const out = await this.sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: chunk.map((m, n) => ({
              Id: String(n),
              ReceiptHandle: m.receiptHandle,
              VisibilityTimeout: visibilitySeconds(m.delaySeconds),
            })),
          }),
        );
        for (const failed of out.Failed ?? []) {
          log('visibility not changed; the message comes back after the queue timeout', {
            messageId: chunk[Number(failed.Id)]?.messageId,
            code: failed.Code,
          });
        }
      } catch (err) {
        // Still correct, only later: the messages come back after the queue's visibility timeout.
        log('visibility not changed; the messages come back after the queue timeout', { messages: chunk.length, error: String(err) });
      }
    }
  }
}

/** A local queue's answer to ChangeMessageVisibility: false when the receipt handle is not one of its messages in flight. */
type LocalVisibilityChange = (receiptHandle: string, delaySeconds: number) => boolean;

/** A local queue's receipt handles start with its token and a colon. */
export const localReceiptHandle = (token: string, random: string): string => `${token}:${random}`;

export class LocalMessageVisibility implements MessageVisibility {
  private readonly queues = new Map<string, LocalVisibilityChange>();

  /** Registers a local queue under the token its receipt handles start with; the returned function unregisters it. */
  register(token: string, change: LocalVisibilityChange): () => void {
    this.queues.set(token, change);
    return () => {
      if (this.queues.get(token) === change) this.queues.delete(token);
    };
  }

  async retryLater(messages: RetryLater[], log: (message: string, details: Record<string, unknown>) => void): Promise<void> {
    for (const m of messages) {
      const change = this.queues.get(m.receiptHandle.slice(0, m.receiptHandle.indexOf(':')));
      if (!change?.(m.receiptHandle, visibilitySeconds(m.delaySeconds))) {
        log('visibility not changed; the message comes back after the queue backoff', { messageId: m.messageId });
      }
    }
  }
}
