// The uploads queue as an import sends to it on AWS (lib/import/enqueue.ts ImportQueue): one SendMessage per object,
// in its client's message group (the uploads queue is a fair queue: docs/design.md §11). The SDK's standard retries
// (throttling included) run first; what still fails reaches the caller, which answers the task TemporaryFailure.
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ImportQueue } from './enqueue';

export class SqsImportQueue implements ImportQueue {
  constructor(
    private readonly sqs: Pick<SQSClient, 'send'>,
    private readonly queueUrl: string,
  ) {}

  async send(body: string, groupId: string): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body, MessageGroupId: groupId }));
  }
}
