// SQS entry point of the `callbacks` function: one completion callback attempt per message. A failed attempt queues
// the next one with its backoff as DelaySeconds (lib/notify/schedule.ts), until delivered or the window closes.
// Built at cold start (app.ts): a missing CALLBACK_QUEUE_URL, TABLE_NAME or CALLBACK_SIGNING_KEY stops it there.
import { sqsClient } from '../../lib/aws/clients';
import { required } from '../../lib/config';
import { SqsJobQueue } from '../../lib/jobs/queue';
import { createCallbacksHandler } from './app';

export const handler = createCallbacksHandler({ callbacks: new SqsJobQueue(sqsClient(), required('CALLBACK_QUEUE_URL')) });
