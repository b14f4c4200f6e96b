// What happens once a batch is done (the BatchStore's onDone, after the write that stamped doneAt succeeded): its
// completion callback's first attempt is queued, and on AWS a `Batch Completed` event goes to EventBridge. The
// attempts themselves run in the callbacks consumer (lib/notify/consumer.ts), on AWS and locally alike.
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { Batch } from '../domain/batch';
import type { BatchSummary } from '../domain/summary';
import type { JobQueue } from '../jobs/queue';
import { buildBatchCompletedEvent, publishBatchCompleted } from './events';
import { callbackMessage, completedSummary } from './job';

/** The least length of the server key callback secrets are derived from (CALLBACK_SIGNING_KEY). */
export const MIN_SIGNING_KEY_LENGTH = 32;

interface CompletionDeps {
  callbacks: JobQueue;
  /** EventBridge (AWS only): the bus `Batch Completed` goes to. */
  events?: { client: EventBridgeClient; busName: string };
  /** The summary as the API shows it (lib/api/present.ts). */
  present: (batch: Batch) => BatchSummary;
  log: (message: string, details: Record<string, unknown>) => void;
}

/**
 * The onDone hook. Failures are logged, not thrown: the batch is done either way, and throwing would only fail the
 * upload or request that happened to finish it.
 */
export const completionNotifier =
  (deps: CompletionDeps) =>
  async (batch: Batch): Promise<void> => {
    const summary = completedSummary(batch, deps.present);
    if (batch.callbackUrl) {
      const message = callbackMessage(batch, batch.callbackUrl, summary);
      // Not lost when this fails: the batch owes its callback (cb_due) until delivered, and the sweep queues it again.
      await deps.callbacks.send(message).catch((err: unknown) =>
        deps.log('completion callback not queued; the reconciliation sweep queues it again', {
          batchId: batch.batchId,
          clientId: batch.clientId,
          error: String(err),
        }),
      );
    }
    if (deps.events) {
      const entry = buildBatchCompletedEvent(deps.events.busName, batch.clientId, summary);
      await publishBatchCompleted(deps.events.client, entry).catch((err: unknown) =>
        deps.log('Batch Completed event not published', { batchId: batch.batchId, clientId: batch.clientId, error: String(err) }),
      );
    }
  };
