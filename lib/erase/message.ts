// The erasure job's message: one batch, named by its client (DELETE /v1/batches/{batchId} sends it).
import * as z from 'zod/mini';
import '../validation-messages';

const eraseMessageSchema = z.strictObject({
  type: z.literal('erase'),
  clientId: z.string().check(z.minLength(1)),
  batchId: z.string().check(z.minLength(1)),
});

type EraseMessage = z.infer<typeof eraseMessageSchema>;

export const encodeEraseMessage = (clientId: string, batchId: string): string =>
  JSON.stringify({ type: 'erase', clientId, batchId } satisfies EraseMessage);

export const decodeEraseMessage = (text: string): EraseMessage => eraseMessageSchema.parse(JSON.parse(text));
