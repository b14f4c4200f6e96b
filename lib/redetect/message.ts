// A re-detection's message on the uploads queue (the ingest consumes it beside S3's notifications): one image of a
// batch that the run `run` owes a new answer.
import * as z from 'zod/mini';
import '../validation-messages';

const redetectMessageSchema = z.strictObject({
  type: z.literal('redetect'),
  clientId: z.string().check(z.minLength(1)),
  batchId: z.string().check(z.minLength(1)),
  fprint: z.string().check(z.minLength(1)),
  run: z.string().check(z.minLength(1)),
});

export type RedetectMessage = z.infer<typeof redetectMessageSchema>;

export const encodeRedetectMessage = (m: Omit<RedetectMessage, 'type'>): string =>
  JSON.stringify({ type: 'redetect', clientId: m.clientId, batchId: m.batchId, fprint: m.fprint, run: m.run } satisfies RedetectMessage);

/** The message a body carries, or undefined for any other body (an S3 notification). */
export function redetectMessageIn(body: string): RedetectMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if ((parsed as { type?: unknown } | null)?.type !== 'redetect') return undefined;
  return redetectMessageSchema.parse(parsed);
}
