// Reading a callback message back (the callbacks consumer): the shape lib/notify/job.ts declares, checked.
import * as z from 'zod/mini';
import '../validation-messages';
import { IceCatError } from '../errors';
import { CALLBACK_MESSAGE_TYPE, type CallbackMessage } from './job';

const callbackMessageSchema = z.strictObject({
  type: z.literal(CALLBACK_MESSAGE_TYPE),
  clientId: z.string().check(z.minLength(1)),
  batchId: z.string().check(z.minLength(1)),
  createdAt: z.number().check(z.int()),
  url: z.string().check(z.minLength(1), z.maxLength(2048)),
  body: z.string(),
  attempts: z.number().check(z.int(), z.gte(0)),
  firstAttemptAt: z.optional(z.number().check(z.int())),
}) satisfies z.ZodMiniType<CallbackMessage>;

export class CallbackMessageError extends IceCatError {
  override name = 'CallbackMessageError';
  readonly code: string = 'callback_message_invalid';
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
