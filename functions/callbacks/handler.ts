// SQS entry point of the `callbacks` function: one completion callback attempt per message. A failed attempt queues
// the next one with its backoff as DelaySeconds (lib/notify/schedule.ts), until delivered or the window closes.
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDocumentClient } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { loadCallbackSigningKey } from '../../lib/notify/completion';
import { handleCallbackMessage, type CallbackConsumerDeps } from '../../lib/notify/consumer';
import { loadNotifyConfig } from '../../lib/notify/schedule';
import { callbackQueueFromEnv } from '../../lib/notify/wiring';
import { recordCallbackState } from '../../lib/store/callback-state';

const config = loadConfig();
const logger = new Logger({ serviceName: 'icecat-callbacks' });
const ddb = createDocumentClient();
const deps: CallbackConsumerDeps = {
  signingKey: loadCallbackSigningKey(),
  config: loadNotifyConfig(),
  queue: callbackQueueFromEnv(),
  recordState: (clientId, batchId, state, final) => recordCallbackState(ddb, config.tableName, clientId, batchId, state, final),
};

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
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
