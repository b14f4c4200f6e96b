import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { buildBatchCompletedEvent, EventPublishError, publishBatchCompleted } from '../../lib/notify/events';

describe('Batch Completed event', () => {
  it('comes from icecat.wrangler with the client and the summary as detail, timed at doneAt', () => {
    const entry = buildBatchCompletedEvent('default', 'c1', { batchId: 'b1', doneAt: '2024-05-01T12:00:00.000Z' });
    expect(entry).toEqual({
      EventBusName: 'default',
      Source: 'icecat.wrangler',
      DetailType: 'Batch Completed',
      Time: new Date('2024-05-01T12:00:00.000Z'),
      Detail: JSON.stringify({ clientId: 'c1', batch: { batchId: 'b1', doneAt: '2024-05-01T12:00:00.000Z' } }),
    });
  });

  it('throws when EventBridge answers 200 with a failed entry (fault injected: no local EventBridge)', async () => {
    const client = new EventBridgeClient({ region: 'us-east-1' });
    jest.spyOn(client, 'send').mockImplementation(async () => ({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }],
    }));
    await expect(publishBatchCompleted(client, buildBatchCompletedEvent('default', 'c1', { batchId: 'b1' }))).rejects.toBeInstanceOf(
      EventPublishError,
    );
  });
});
