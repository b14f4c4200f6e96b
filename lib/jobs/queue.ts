// Work handed from one function to another after it answered: a batch's erasure, a completion callback's attempts.
// On AWS each is an SQS queue consumed by its own function (serverless.yml), DelaySeconds carrying a retry's backoff.
// Locally the same consumer functions run in-process: the local stack builds a LocalJobQueue per queue, hands it to
// the functions that send (through their deps, as the SQS queue is handed on AWS) and sets the consuming function's
// handler on it; a send calls that handler directly (or after the delay), so the same handler code runs.
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { IceCatError, type IceCatErrorOptions } from '../errors';

export interface JobQueue {
  /** Queues one message; `delaySeconds` (at most SQS's 900) holds it back that long. */
  send(body: string, delaySeconds?: number): Promise<void>;
}

/** SQS's largest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

const delaySecondsOf = (delay = 0): number => Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(delay)));

export class SqsJobQueue implements JobQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(body: string, delaySeconds?: number): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body, DelaySeconds: delaySecondsOf(delaySeconds) }));
  }
}

/** The queues the local stack stands in for, by name. */
type LocalQueueName = 'erase' | 'callbacks' | 'uploads' | 'imports';

/** A consumer function's handler, given an SQS-shaped event as Lambda would. */
export type LocalConsumer = (event: SQSEvent) => Promise<unknown>;

let sequence = 0;
const sqsEventOf = (queue: LocalQueueName, body: string, messageId: string, receiveCount: number): SQSEvent => ({
  Records: [
    {
      messageId,
      receiptHandle: 'local',
      body,
      attributes: {
        ApproximateReceiveCount: String(receiveCount),
        SentTimestamp: String(Date.now()),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:123456789000:icecat-wrangler-local-${queue}`,
      awsRegion: 'us-east-1',
    },
  ],
});

/** A local queue was sent to before its consumer was set (or after the stack stopped). */
export class NoLocalConsumerError extends IceCatError {
  override name = 'NoLocalConsumerError';
  readonly code = 'no_local_consumer';
  readonly queue: LocalQueueName;
  constructor(message: string, options: IceCatErrorOptions & { queue: LocalQueueName }) {
    super(message, options);
    this.queue = options.queue;
  }
}

/** The consuming function ran past its timeout: Lambda stops it, and SQS hands its message out again. */
class FunctionTimeoutError extends IceCatError {
  override name = 'FunctionTimeoutError';
  readonly code = 'function_timeout';
  readonly timeoutMs: number;
  constructor(message: string, options: IceCatErrorOptions & { timeoutMs: number }) {
    super(message, options);
    this.timeoutMs = options.timeoutMs;
  }
}

/** What Lambda and SQS hold the consuming function to: its timeout, and the queue's visibility timeout and receives. */
export interface LocalConsumerLimits {
  /** The function's timeout (serverless.yml): an invocation past it fails as Lambda's does. */
  timeoutMs: number;
  /** The queue's visibility timeout: a timed-out message is handed out again this long after it was received. */
  visibilityTimeoutMs: number;
  /** The queue's redrive policy: after this many receives a timed-out message is dropped (SQS's dead-letter queue). */
  maxReceiveCount: number;
}

/** `work`, or a FunctionTimeoutError once `ms` have passed (the work itself is not stopped: nothing can stop it here). */
async function withinTimeout<T>(work: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new FunctionTimeoutError(`Task timed out after ${(ms / 1000).toFixed(2)} seconds`, { timeoutMs: ms })),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export class LocalJobQueue implements JobQueue {
  /**
   * `awaitImmediate`: a message without delay is consumed before send returns (the erasure: a DELETE answers once
   * it is done, so the local stack is deterministic); otherwise consumption never holds up the sender. `limits`: the
   * consuming function's timeout and the queue's redelivery, as on AWS; without them the consumer runs unbounded.
   */
  constructor(
    private readonly queue: LocalQueueName,
    private readonly opts: { awaitImmediate: boolean; log?: (line: string) => void; limits?: LocalConsumerLimits },
  ) {}

  private consumer: LocalConsumer | undefined;

  /** The consuming function's handler, which every message goes to (set once it is built: it may send here too). */
  consumeWith(consumer: LocalConsumer | undefined): void {
    this.consumer = consumer;
  }

  async send(body: string, delaySeconds = 0): Promise<void> {
    const consumer = this.consumer;
    if (!consumer)
      throw new NoLocalConsumerError(`no consumer for the local ${this.queue} queue (is the local stack running?)`, { queue: this.queue });
    const log = this.opts.log ?? ((line: string) => console.error(line));
    const limits = this.opts.limits;
    const messageId = `local-${this.queue}-${Date.now()}-${++sequence}`;
    const consume = (receiveCount: number): Promise<void> =>
      withinTimeout(consumer(sqsEventOf(this.queue, body, messageId, receiveCount)), limits?.timeoutMs).then(
        () => undefined,
        (err: unknown) => {
          log(`[${this.queue}] message failed: ${String(err)}`);
          // A timed-out invocation's message comes back once its visibility timeout is over, as SQS hands it out again.
          if (!(err instanceof FunctionTimeoutError) || !limits) return;
          if (receiveCount >= limits.maxReceiveCount) {
            log(`[${this.queue}] message ${messageId} dropped after ${receiveCount} receives (SQS would dead-letter it)`);
            return;
          }
          setTimeout(() => void consume(receiveCount + 1), Math.max(0, limits.visibilityTimeoutMs - limits.timeoutMs)).unref();
        },
      );
    if (delaySeconds <= 0 && this.opts.awaitImmediate) {
      await consume(1);
      return;
    }
    // Unref'd: a pending retry never keeps the process alive (the local queue is not durable; SQS is).
    setTimeout(() => void consume(1), Math.max(0, delaySeconds) * 1000).unref();
  }
}
