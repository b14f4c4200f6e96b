// SQS entry point of the `erase` function: one batch erasure per message (DELETE /v1/batches/{batchId} queues it).
// The work is lib/erase; it resumes where an interrupted run stopped, so a failed message is simply received again.
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { runEraseJob } from '../../lib/erase/job';

const config = loadConfig();
const logger = new Logger({ serviceName: 'icecat-erase' });
const deps = {
  s3: createS3Client(),
  ddb: createDocumentClient(),
  bucketName: config.bucketName,
  tableName: config.tableName,
};

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failed: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const report = await runEraseJob(deps, record.body);
      logger.info(report ? 'batch erased' : 'no batch marked for erasure', { messageId: record.messageId, ...report });
    } catch (err) {
      logger.error('erasure interrupted; it resumes when the message is received again', { messageId: record.messageId, error: err as Error });
      failed.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failed };
};
