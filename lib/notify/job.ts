// The message that carries a callback delivery between attempts (an SQS message delayed by the backoff on AWS, the
// local queue locally). It holds the summary as first sent, so every attempt signs the same bytes, and no secret:
// the consumer derives the batch's secret again from the server key.
import * as z from 'zod';
import type { CallbackJob } from './delivery';

export const CALLBACK_MESSAGE_TYPE = 'callback';

const callbackMessageSchema = z.strictObject({
  type: z.literal(CALLBACK_MESSAGE_TYPE),
  clientId: z.string().min(1),
  batchId: z.string().min(1),
  /** The batch's creation time, epoch ms: an input of its secret. */
  createdAt: z.number().int(),
  url: z.string().min(1).max(2048),
  body: z.string(),
  attempts: z.number().int().min(0),
  firstAttemptAt: z.number().int().optional(),
});

export type CallbackMessage = z.infer<typeof callbackMessageSchema>;

export class CallbackMessageError extends Error {
  override name = 'CallbackMessageError';
}

export const encodeCallbackMessage = (m: CallbackMessage): string => JSON.stringify(m);

export function decodeCallbackMessage(text: string): CallbackMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new CallbackMessageError('callback message is not JSON', { cause });
  }
  const parsed = callbackMessageSchema.safeParse(raw);
  if (!parsed.success) throw new CallbackMessageError(`callback message is malformed: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

export const jobOf = (m: CallbackMessage): CallbackJob => ({
  url: m.url,
  body: m.body,
  attempts: m.attempts,
  ...(m.firstAttemptAt !== undefined ? { firstAttemptAt: m.firstAttemptAt } : {}),
});

/** The message for the next attempt, after a failed one. */
export const nextMessage = (m: CallbackMessage, job: CallbackJob): CallbackMessage => ({
  ...m,
  attempts: job.attempts,
  ...(job.firstAttemptAt !== undefined ? { firstAttemptAt: job.firstAttemptAt } : {}),
});
