// The route function (docs/design.md §11): S3's notifications on to the fair uploads queue, each in its client's
// message group. No local SQS exists (the local stack's bridge plays the router's part), so SQS's answers are injected.
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { localS3EventMessage } from '../../local/bridge/bridge';

const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/icecat-wrangler-dev-uploads';

const notification = (key: string): string =>
  localS3EventMessage({ operation: 'Put', bucket: 'b', key, size: 10, eTag: 'e', sourceIp: '127.0.0.1', time: new Date(0) });
const record = (body: string, i: number): SQSRecord => ({ messageId: `m${i}`, body }) as SQSRecord;

let handler: (event: SQSEvent) => Promise<unknown>;

beforeAll(async () => {
  process.env.INGEST_QUEUE_URL = QUEUE;
  ({ handler } = (await import('../../functions/route/handler')) as { handler: typeof handler });
});

beforeEach(() => sqs.reset());

describe('the route function', () => {
  it("sends each S3 notification unchanged to the uploads queue, in its client's message group", async () => {
    // Arrange
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const bodies = [notification('uploads/acme/b1/a.jpg'), notification('uploads/zeta/b9/cat+1.jpg'), '{"Event":"s3:TestEvent"}'];

    // Act
    await handler({ Records: bodies.map(record) });

    // Assert
    const [call] = sqs.commandCalls(SendMessageBatchCommand);
    expect(call?.args[0].input.QueueUrl).toBe(QUEUE);
    expect(call?.args[0].input.Entries?.map((e) => [e.MessageBody, e.MessageGroupId])).toEqual([
      [bodies[0], 'acme'],
      [bodies[1], 'zeta'],
      [bodies[2], undefined],
    ]);
  });

  it('fails the whole invocation when SQS keeps refusing, so that the events are received and sent again', async () => {
    // Arrange
    sqs.on(SendMessageBatchCommand).resolves({ Failed: [{ Id: '0', Code: 'InternalError', SenderFault: false }] });

    // Act
    const run = handler({ Records: [record(notification('uploads/acme/b1/a.jpg'), 0)] });

    // Assert
    await expect(run).rejects.toThrow(/SQS refused 1 message/);
  });
});
