// An import's message on the uploads queue (docs/design.md §16): one object of a source bucket that a batch classifies
// where it is. The ingest consumes it beside S3's notifications and re-detections, told apart by `type` (an S3
// notification has `Records` and no `type`; a re-detection is `type: 'redetect'`). Whoever lists the source sends it:
// the local lister (lib/import/lister.ts) or, on AWS, the engine's task function, both through enqueueSourceObject
// (lib/import/enqueue.ts), which counts it against the images quota first and sends it in its client's message group.
import * as z from 'zod/mini';
import '../validation-messages';
import type { SourceObject } from '../domain/image';

/** S3's own bounds: a bucket name 3–63 characters, a key at most 1,024 bytes. */
const sourceObjectSchema = z.strictObject({
  bucket: z.string().check(z.minLength(3), z.maxLength(63)),
  key: z.string().check(z.minLength(1), z.maxLength(1024)),
  versionId: z.optional(z.string().check(z.minLength(1))),
  etag: z.optional(z.string().check(z.minLength(1))),
  size: z.optional(z.number().check(z.int(), z.nonnegative())),
});

const importMessageSchema = z.strictObject({
  type: z.literal('import'),
  clientId: z.string().check(z.minLength(1)),
  batchId: z.string().check(z.minLength(1)),
  source: sourceObjectSchema,
  /** Epoch ms when it was listed and counted against the quota: the UTC day it counts in. */
  listedAt: z.number().check(z.int(), z.nonnegative()),
});

export type ImportMessage = z.infer<typeof importMessageSchema>;

/** The message for one listed object (only the fields set are written: the body stays small). */
export function encodeImportMessage(m: Omit<ImportMessage, 'type'>): string {
  const s: SourceObject = m.source;
  const source: SourceObject = {
    bucket: s.bucket,
    key: s.key,
    ...(s.versionId !== undefined ? { versionId: s.versionId } : {}),
    ...(s.etag !== undefined ? { etag: s.etag } : {}),
    ...(s.size !== undefined ? { size: s.size } : {}),
  };
  return JSON.stringify({ type: 'import', clientId: m.clientId, batchId: m.batchId, source, listedAt: m.listedAt } satisfies ImportMessage);
}

/** The import message a body carries; undefined for any other body (an S3 notification, a re-detection). */
export function importMessageIn(body: string): ImportMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if ((parsed as { type?: unknown } | null)?.type !== 'import') return undefined;
  return importMessageSchema.parse(parsed);
}

/** The local lister's job (local/stack/import-lister.ts): list this batch's source on from its checkpoint. */
export interface ListJob {
  type: 'import-list';
  clientId: string;
  batchId: string;
}

export const encodeListJob = (clientId: string, batchId: string): string =>
  JSON.stringify({ type: 'import-list', clientId, batchId } satisfies ListJob);

/** The job a body carries; undefined for any other body. */
export function listJobIn(body: string): ListJob | undefined {
  try {
    const parsed = JSON.parse(body) as Partial<ListJob> | null;
    return parsed?.type === 'import-list' && typeof parsed.clientId === 'string' && typeof parsed.batchId === 'string'
      ? { type: 'import-list', clientId: parsed.clientId, batchId: parsed.batchId }
      : undefined;
  } catch {
    return undefined;
  }
}
