// The local erase and callbacks queues hold their consumer to its function's timeout as Lambda does: an invocation
// past it fails, and SQS hands its message out again once the visibility timeout is over, up to maxReceiveCount.
import type { SQSEvent } from 'aws-lambda';
import { LocalJobQueue } from '../../lib/jobs/queue';
import { waitFor } from '../helpers';

const LIMITS = { timeoutMs: 50, visibilityTimeoutMs: 120, maxReceiveCount: 3 };

function recordingQueue(hangUntilReceive: number) {
  const received: { messageId: string; receiveCount: string }[] = [];
  const logged: string[] = [];
  const queue = new LocalJobQueue('callbacks', { awaitImmediate: true, log: (line) => logged.push(line), limits: LIMITS });
  queue.consumeWith(async (event: SQSEvent) => {
    const record = event.Records[0]!;
    received.push({ messageId: record.messageId, receiveCount: record.attributes.ApproximateReceiveCount });
    if (received.length < hangUntilReceive) await new Promise(() => undefined);
  });
  return { queue, received, logged };
}

describe('a local job queue under its function timeout', () => {
  it('hands a message whose invocation timed out out again, same id, one receive more', async () => {
    const { queue, received, logged } = recordingQueue(2);

    await queue.send('{"job":1}');
    await waitFor(() => received.length === 2, { timeoutMs: 2_000, intervalMs: 10, what: 'the second receive' });

    expect(received).toEqual([
      { messageId: received[0]?.messageId, receiveCount: '1' },
      { messageId: received[0]?.messageId, receiveCount: '2' },
    ]);
    expect(logged).toEqual([expect.stringContaining('FunctionTimeoutError: Task timed out after 0.05 seconds')]);
  });

  it('stops handing it out after maxReceiveCount receives, as SQS moves it to the dead-letter queue', async () => {
    const { queue, received, logged } = recordingQueue(Number.POSITIVE_INFINITY);

    await queue.send('{"job":2}');
    await waitFor(() => logged.some((line) => line.includes('dropped after 3 receives')), {
      timeoutMs: 2_000,
      intervalMs: 10,
      what: 'the message dropped',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(received.map((r) => r.receiveCount)).toEqual(['1', '2', '3']);
  });
});
