// The completion hook and the callbacks queue as a function builds them from its environment: SQS and EventBridge on
// AWS (CALLBACK_QUEUE_URL, EVENT_BUS_NAME), the in-process queue of the local stack otherwise.
import { createEventBridgeClient, sqsClient } from '../aws/clients';
import { jobQueue, type JobQueue } from '../jobs/queue';
import { presentBatch, type Batch } from '../domain';
import { completionNotifier } from './completion';

export const callbackQueueFromEnv = (): JobQueue =>
  jobQueue('callbacks', process.env.CALLBACK_QUEUE_URL || undefined, sqsClient, { awaitImmediate: false });

const logJson = (message: string, details: Record<string, unknown>) => console.error(JSON.stringify({ level: 'ERROR', message, ...details }));

/** The BatchStore's onDone: the callback's first attempt queued, and the EventBridge event where a bus is named. */
export function completionFromEnv(log = logJson): (batch: Batch) => Promise<void> {
  const busName = process.env.EVENT_BUS_NAME || undefined;
  return completionNotifier({
    callbacks: callbackQueueFromEnv(),
    ...(busName ? { events: { client: createEventBridgeClient(), busName } } : {}),
    present: presentBatch,
    log,
  });
}
