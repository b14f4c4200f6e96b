// The local queues as SQS stands between a function and its queue: the in-process queues are handed to each function
// wrapped as that function's sender, so a send is refused as SQS refuses it: AccessDenied (403) unless the sender's
// role allows sqs:SendMessage on the queue's ARN (SendMessageBatch is authorized as SendMessage), and
// InvalidParameterValue for a body over the queue's MaximumMessageSize (resources/ sets none: SQS's default, 256 KiB).
// A consumer is checked once, when its event source is attached: Lambda's event source mapping polls with the
// function's role, and cannot be created without ReceiveMessage, DeleteMessage and GetQueueAttributes on the queue.
import { SQSServiceException } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../../lib/jobs/queue';
import { LocalStackError } from '../errors';
import type { LocalIam } from '../iam/iam';

/** A message's largest body: SQS's default MaximumMessageSize (the template's queues set none). */
export const SQS_MAX_MESSAGE_BYTES = 262_144;

/** SQS's error, as the SDK's SQS client raises it from the service's answer. */
export function sqsError(name: string, message: string, status: number): SQSServiceException {
  return new SQSServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message });
}

/** InvalidParameterValue for a body SQS would not take, or undefined. */
export function messageSizeError(body: string, maxBytes = SQS_MAX_MESSAGE_BYTES): SQSServiceException | undefined {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes <= maxBytes) return undefined;
  return sqsError(
    'InvalidParameterValue',
    `One or more parameters are invalid. Reason: Message must be shorter than ${maxBytes} bytes.`,
    400,
  );
}

/** `queue` as `fn` sends to it: each send checked against its role and SQS's message size. */
export function senderAs(iam: LocalIam, fn: string, queueName: string, queue: JobQueue): JobQueue {
  const resource = iam.queueArn(queueName);
  return {
    async send(body, delaySeconds) {
      // SQS's own message for an action its role lacks names the action in lower case.
      const refusal = await iam.refusal(fn, [{ action: 'sqs:SendMessage', resource }]);
      if (refusal) throw sqsError('AccessDenied', refusal.message.replaceAll('sqs:SendMessage', 'sqs:sendmessage'), 403);
      const tooLarge = messageSizeError(body);
      if (tooLarge) throw tooLarge;
      return queue.send(body, delaySeconds);
    },
  };
}

export class EventSourceMappingError extends LocalStackError {
  override name = 'EventSourceMappingError';
  readonly code = 'event_source_mapping_refused';
}

/** What Lambda needs to poll a queue with the consumer's role: the mapping is refused without it, as on AWS. */
export async function checkConsumer(iam: LocalIam, fn: string, queueName: string, extra: readonly string[] = []): Promise<void> {
  const resource = iam.queueArn(queueName);
  for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', ...extra]) {
    const refusal = await iam.refusal(fn, [{ action, resource }]);
    if (refusal) throw new EventSourceMappingError(`${fn} cannot consume ${queueName}: ${refusal.message}`);
  }
}
