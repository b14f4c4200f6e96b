// The local queues as SQS guards them (local/queue/iam.ts): a function sends only where its role allows
// sqs:SendMessage, a body over SQS's message size is InvalidParameterValue, and a consumer whose role cannot receive
// from its queue cannot be attached, as Lambda's event source mapping cannot. Real in-process queues; the roles are
// resources/roles.yml's as the template states them.
import { SQSServiceException } from '@aws-sdk/client-sqs';
import { LocalJobQueue } from '../../lib/jobs/queue';
import { LocalIam } from '../../local/iam/iam';
import { checkConsumer, EventSourceMappingError, SQS_MAX_MESSAGE_BYTES, senderAs } from '../../local/queue/iam';
import { stackIam } from '../../local/stack/iam';

let iam: LocalIam;
let received: string[];
let erasures: LocalJobQueue;
beforeAll(() => {
  iam = stackIam();
});
beforeEach(() => {
  received = [];
  erasures = new LocalJobQueue('erase', { awaitImmediate: true });
  erasures.consumeWith(async (event) => {
    received.push(...event.Records.map((r) => r.body));
  });
});

describe('sends', () => {
  it("delivers what the sender's role may send", async () => {
    await senderAs(iam, 'batches', 'erase', erasures).send('{"a":1}');

    expect(received).toEqual(['{"a":1}']);
  });

  it('refuses a function whose role has no sqs:SendMessage on the queue, with AccessDenied 403, and delivers nothing', async () => {
    const err = await senderAs(iam, 'api', 'erase', erasures)
      .send('{}')
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(SQSServiceException);
    expect(err).toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect((err as Error).message).toContain('is not authorized to perform: sqs:sendmessage on resource: arn:aws:sqs:us-east-1:');
    expect(received).toEqual([]);
  });

  it('refuses a body over 256 KiB with InvalidParameterValue, and takes one of exactly that size', async () => {
    const sender = senderAs(iam, 'batches', 'erase', erasures);

    const err = await sender.send('x'.repeat(SQS_MAX_MESSAGE_BYTES + 1)).catch((e: unknown) => e);
    await sender.send('x'.repeat(SQS_MAX_MESSAGE_BYTES));

    expect(err).toMatchObject({ name: 'InvalidParameterValue', $metadata: { httpStatusCode: 400 } });
    expect(received.map((b) => b.length)).toEqual([SQS_MAX_MESSAGE_BYTES]);
  });
});

describe('consumers', () => {
  it("attaches each function to the queue its role receives from, and refuses another's", async () => {
    await expect(checkConsumer(iam, 'erase', 'erase')).resolves.toBeUndefined();
    await expect(checkConsumer(iam, 'ingest', 'uploads', ['sqs:ChangeMessageVisibility'])).resolves.toBeUndefined();
    await expect(checkConsumer(iam, 'erase', 'callbacks')).rejects.toBeInstanceOf(EventSourceMappingError);
  });
});
