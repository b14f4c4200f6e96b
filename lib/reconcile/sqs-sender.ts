// The sweep's and the router's sender on AWS: SendMessageBatch, ten messages a request, retrying the entries SQS
// refused; `groupOf` gives each message its MessageGroupId (the uploads queue is a fair queue: docs/design.md §11).
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { IceCatError } from '../errors';

export class SendFailedError extends IceCatError {
  override name = 'SendFailedError';
  readonly code: string = 'send_failed';
}

const MAX_BATCH = 10;

export function sqsSender(
  sqs: Pick<SQSClient, 'send'>,
  queueUrl: string,
  attempts = 3,
  groupOf: (body: string) => string | undefined = () => undefined,
): (bodies: string[]) => Promise<void> {
  return async (bodies) => {
    for (let start = 0; start < bodies.length; start += MAX_BATCH) {
      let entries = bodies.slice(start, start + MAX_BATCH).map((body, i) => {
        const group = groupOf(body);
        return { Id: String(start + i), MessageBody: body, ...(group === undefined ? {} : { MessageGroupId: group }) };
      });
      for (let attempt = 1; entries.length > 0; attempt += 1) {
        const { Failed = [] } = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
        if (Failed.length === 0) break;
        if (attempt >= attempts) {
          const first = Failed[0];
          throw new SendFailedError(`SQS refused ${Failed.length} message(s), e.g. ${first?.Code}: ${first?.Message}`);
        }
        const failedIds = new Set(Failed.map((f) => f.Id));
        entries = entries.filter((e) => failedIds.has(e.Id));
      }
    }
  };
}
