// Reading a callback message back (the callbacks consumer): the shape lib/notify/job.ts declares, checked.
import * as z from 'zod';
import { CALLBACK_MESSAGE_TYPE, type CallbackMessage } from './job';

const callbackMessageSchema = z.strictObject({
  type: z.literal(CALLBACK_MESSAGE_TYPE),
  clientId: z.string().min(1),
  batchId: z.string().min(1),
  createdAt: z.number().int(),
  url: z.string().min(1).max(2048),
  body: z.string(),
  attempts: z.number().int().min(0),
  firstAttemptAt: z.number().int().optional(),
}) satisfies z.ZodType<CallbackMessage>;

export class CallbackMessageError extends Error {
  override name = 'CallbackMessageError';
}

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
