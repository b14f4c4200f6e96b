// The completion hook, built from what a function is given: the callbacks queue and, where one is named, the event
// bus. On AWS both come from the environment (functions/config.ts: a missing CALLBACK_QUEUE_URL or EVENT_BUS_NAME stops
// the function at cold start, naming the variable); the local stack passes its in-process callbacks queue instead.
import { createEventBridgeClient, sqsClient } from '../aws/clients';
import type { Batch } from '../domain/batch';
import { summarizeBatch } from '../domain/summary';
import { type JobQueue, SqsJobQueue } from '../jobs/queue';
import { completionNotifier } from './completion';

export interface NotifyWiring {
  /** Where completion callbacks' attempts go (the callbacks function consumes it). */
  callbacks: JobQueue;
  /** The EventBridge bus that gets BatchCompleted events; none locally. */
  eventBusName?: string;
}

/** On AWS: the callbacks queue by its URL and the event bus by its name (functions/config.ts reads both, required). */
export const awsNotifyWiring = (settings: { callbackQueueUrl: string; eventBusName: string }): NotifyWiring => ({
  callbacks: new SqsJobQueue(sqsClient(), settings.callbackQueueUrl),
  eventBusName: settings.eventBusName,
});

const logJson = (message: string, details: Record<string, unknown>) =>
  console.error(JSON.stringify({ level: 'ERROR', message, ...details }));

/**
 * The BatchStore's onDone: the callback's first attempt queued, and the EventBridge event where a bus is named, the
 * batch priced at the function's configured price per DetectLabels call.
 */
export function completionHook(wiring: NotifyWiring, pricePerImageUsd: number, log = logJson): (batch: Batch) => Promise<void> {
  return completionNotifier({
    callbacks: wiring.callbacks,
    ...(wiring.eventBusName ? { events: { client: createEventBridgeClient(), busName: wiring.eventBusName } } : {}),
    present: (batch) => summarizeBatch(batch, { pricePerImageUsd }),
    log,
  });
}
