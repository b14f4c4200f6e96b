// The EventBridge side of completion (AWS): a `Batch Completed` event from `icecat.wrangler` with the summary.
import { type EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { IceCatError } from '../errors';

const EVENT_SOURCE = 'icecat.wrangler';
const BATCH_COMPLETED = 'Batch Completed';

export class EventPublishError extends IceCatError {
  override name = 'EventPublishError';
  readonly code: string = 'event_publish_failed';
}

export function buildBatchCompletedEvent(
  busName: string,
  clientId: string,
  summary: { batchId: string; doneAt?: string | null },
): PutEventsRequestEntry {
  return {
    EventBusName: busName,
    Source: EVENT_SOURCE,
    DetailType: BATCH_COMPLETED,
    ...(summary.doneAt ? { Time: new Date(summary.doneAt) } : {}),
    Detail: JSON.stringify({ clientId, batch: summary }),
  };
}

/** PutEvents answers 200 with per-entry failures: those are thrown, so the caller's retry covers them. */
export async function publishBatchCompleted(client: EventBridgeClient, entry: PutEventsRequestEntry): Promise<void> {
  const out = await client.send(new PutEventsCommand({ Entries: [entry] }));
  if (out.FailedEntryCount) {
    const failed = out.Entries?.find((e) => e.ErrorCode);
    throw new EventPublishError(`EventBridge refused the event: ${failed?.ErrorCode ?? 'unknown'} ${failed?.ErrorMessage ?? ''}`.trim());
  }
}
