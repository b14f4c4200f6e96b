// The sweep's SQS sender. No local SQS exists, so SQS's answers, partial failures included, are injected.
import type { SendMessageBatchCommand, SendMessageBatchCommandOutput } from '@aws-sdk/client-sqs';
import { SendFailedError, sqsSender } from '../../lib/reconcile/sqs-sender';

type Answer = (entries: { Id: string; MessageBody: string }[]) => Partial<SendMessageBatchCommandOutput>;

function fakeSqs(answer: Answer) {
  const requests: { Id: string; MessageBody: string }[][] = [];
  const sqs = {
    send: async (command: SendMessageBatchCommand) => {
      const entries = (command.input.Entries ?? []) as { Id: string; MessageBody: string }[];
      requests.push(entries);
      return answer(entries);
    },
  };
  return { sqs: sqs as never, requests };
}
const bodies = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);

describe('sqsSender', () => {
  it('sends ten messages a request', async () => {
    // Arrange
    const { sqs, requests } = fakeSqs(() => ({ Successful: [], Failed: [] }));

    // Act
    await sqsSender(sqs, 'https://sqs/q')(bodies(23));

    // Assert
    expect(requests.map((r) => r.length)).toEqual([10, 10, 3]);
    expect(requests.flat().map((e) => e.MessageBody)).toEqual(bodies(23));
  });

  it("gives each message its MessageGroupId (the fair uploads queue's tenant), and none where groupOf has none", async () => {
    // Arrange
    const { sqs, requests } = fakeSqs(() => ({ Failed: [] }));

    // Act
    await sqsSender(sqs, 'https://sqs/q', 3, (body) => (body === 'm1' ? undefined : `client-${body}`))(bodies(3));

    // Assert
    expect(requests.flat().map((e) => (e as { MessageGroupId?: string }).MessageGroupId)).toEqual(['client-m0', undefined, 'client-m2']);
  });

  it('sends again only the entries SQS refused in a partial failure', async () => {
    // Arrange
    let first = true;
    const { sqs, requests } = fakeSqs((entries) => {
      if (!first) return { Failed: [] };
      first = false;
      return { Failed: [{ Id: entries[1]!.Id, Code: 'InternalError', SenderFault: false }] };
    });

    // Act
    await sqsSender(sqs, 'https://sqs/q')(bodies(3));

    // Assert
    expect(requests.map((r) => r.map((e) => e.MessageBody))).toEqual([['m0', 'm1', 'm2'], ['m1']]);
  });

  it("fails, naming SQS's error, when an entry is refused at every attempt", async () => {
    // Arrange
    const { sqs } = fakeSqs((entries) => ({ Failed: [{ Id: entries[0]!.Id, Code: 'KMS.ThrottlingException', SenderFault: false }] }));

    // Act
    const sending = sqsSender(sqs, 'https://sqs/q', 2)(bodies(1));

    // Assert
    await expect(sending).rejects.toThrow(SendFailedError);
    await expect(sqsSender(sqs, 'https://sqs/q', 2)(bodies(1))).rejects.toThrow(/KMS.ThrottlingException/);
  });
});
