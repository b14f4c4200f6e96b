// Throttling, which neither the local DynamoDB nor the local queue produce: the importTask function (functions/
// import-task, lib/import/batch-operations-task.ts) answers a throttled DynamoDB write or SQS send TemporaryFailure,
// so that S3 Batch Operations redrives the task instead of failing it. The SDK clients are mocked for that fault only
// (with the SDK's own retries off, as they would have been spent on AWS).
import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { RequestThrottled, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { s3BatchInvocationFor } from '../../events/s3-batch-operations';
import { answerInvocation } from '../../lib/import/batch-operations-task';
import { SqsImportQueue } from '../../lib/import/sqs-queue';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ImportJobsStore } from '../../lib/store/imports/jobs';
import { ImportMarksStore } from '../../lib/store/imports/marks';

const ddbMock = mockClient(DynamoDBDocumentClient);
const sqsMock = mockClient(SQSClient);
const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1', maxAttempts: 1 }));
const sqs = new SQSClient({ region: 'eu-west-1', maxAttempts: 1 });
const deps = {
  queue: new SqsImportQueue(sqs, 'https://sqs.eu-west-1.amazonaws.com/123456789012/icecat-wrangler-dev-uploads'),
  marks: new ImportMarksStore({ ddb, tableName: 'T' }),
  quota: new ClientQuotaStore({
    ddb,
    tableName: 'T',
    defaults: { ratePerSecond: 50, maxImagesPerDay: 100, maxBatchesPerDay: 10 },
    cacheMs: 0,
    transactions: false,
  }),
  progress: new ImportJobsStore({ ddb, tableName: 'T', transactions: false }),
};
const event = s3BatchInvocationFor(
  { clientId: 'acme', batchId: 'b1', expiresAt: '1893456000', allow: '["s3://acme-photos/"]' },
  { bucket: 'acme-photos', encodedKey: 'cat.jpg', taskId: 'task-1' },
);

beforeEach(() => {
  ddbMock.reset();
  sqsMock.reset();
  ddbMock.on(GetCommand).resolves({ Item: {} });
  ddbMock.on(UpdateCommand).resolves({});
});

describe('a throttled AWS call in the import task', () => {
  it('answers TemporaryFailure when DynamoDB throttles the send mark, sending nothing', async () => {
    ddbMock.on(UpdateCommand).rejects(new ProvisionedThroughputExceededException({ message: 'Rate of requests exceeds', $metadata: {} }));

    const answer = await answerInvocation(deps, event);

    expect(answer.results).toEqual([
      {
        taskId: 'task-1',
        resultCode: 'TemporaryFailure',
        resultString: 'Throttled: ProvisionedThroughputExceededException: Rate of requests exceeds',
      },
    ]);
    expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(0);
  });

  it("answers TemporaryFailure when SQS throttles the send, and leaves the object's mark unsent so the redrive sends it", async () => {
    sqsMock.on(SendMessageCommand).rejects(new RequestThrottled({ message: 'Request is throttled', $metadata: {} }));

    const answer = await answerInvocation(deps, event);

    expect(answer.results[0]).toMatchObject({
      resultCode: 'TemporaryFailure',
      resultString: 'Throttled: RequestThrottled: Request is throttled',
    });
    const marks = ddbMock.commandCalls(UpdateCommand).map((c) => c.args[0].input.ExpressionAttributeValues?.[':sent']);
    expect(marks).not.toContain('sent');
    expect(sqsMock.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageGroupId).toBe('acme');
  });
});
