// The `callbacks` function built from what it is given: the queue its next attempts go to, SQS on AWS (handler.ts)
// and the local stack's in-process queue locally. The rest it reads from its environment once, when built.
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDocumentClient } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import type { JobQueue } from '../../lib/jobs/queue';
import { loadCallbackSigningKey } from '../../lib/notify/completion';
import { handleCallbackMessage, type CallbackConsumerDeps } from '../../lib/notify/consumer';
import { loadNotifyConfig } from '../../lib/notify/schedule';
import { recordCallbackState } from '../../lib/store/callback-state';

export type CallbacksHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export function createCallbacksHandler(wiring: { callbacks: JobQueue }): CallbacksHandler {
  const config = loadConfig();
  const logger = new Logger({ serviceName: 'icecat-callbacks' });
  const ddb = createDocumentClient();
  const deps: CallbackConsumerDeps = {
    signingKey: loadCallbackSigningKey(),
    config: loadNotifyConfig(),
    queue: wiring.callbacks,
    recordState: (clientId, batchId, state, final) => recordCallbackState(ddb, config.tableName, clientId, batchId, state, final),
  };
  return async (event) => {
    const failed: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        await handleCallbackMessage(deps, record.body);
      } catch (err) {
        logger.error('callback attempt failed; SQS delivers it again', { messageId: record.messageId, error: err as Error });
        failed.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failed };
  };
}
