// A batch: creating it, its upload forms, closing it, its summary (the domain's BatchSummary, checked here), the
// client's list of them, erasing one, and :reclassify.
import * as z from 'zod/mini';
import { BATCH_STATUSES } from '../../domain/batch';
import { type BatchSummary } from '../../domain/summary';
import { hasForbiddenFileNameCharacters, hasInvalidPathSegment } from '../../ids';
import {
  batchIdSchema,
  cursorSchema,
  dollarsSchema,
  isoTime,
  limitSchema,
  optional,
  rangeCheck,
  type SchemaLimits,
  timeSchema,
} from './common';
import { importSourceSchema, importSummarySchema } from './import-sources';

export const clientBatchesQuerySchema = z
  .strictObject({
    status: optional(z.enum(BATCH_STATUSES), 'Only batches in this status.'),
    from: optional(timeSchema, 'Created at or after this time.'),
    to: optional(timeSchema, 'Created at or before this time.'),
    limit: limitSchema,
    cursor: z.optional(cursorSchema),
  })
  .check(rangeCheck);

// Bodies -------------------------------------------------------------------------------------------------------

/** A file name becomes the last part of uploads/{clientId}/{batchId}/{fileName}: folders allowed, no escaping them. */
const fileNameSchema = z.string().check(
  z.minLength(1),
  z.maxLength(255),
  z.refine((n: string) => !hasForbiddenFileNameCharacters(n), 'must not contain control characters or backslashes'),
  z.refine((n: string) => !hasInvalidPathSegment(n), 'must be a relative path without empty, "." or ".." segments'),
);

/** Files to upload: one presigned POST form each. */
function filesSchema(limits: SchemaLimits, min = 0) {
  return z
    .array(
      z.strictObject({
        name: fileNameSchema,
        contentType: z.string().check(z.regex(/^image\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/, 'must be an image/* media type')),
        size: z.number().check(z.int(), z.gte(1), z.meta({ description: `Bytes; at most ${limits.maxUploadBytes} (413 above).` })),
      }),
    )
    .check(
      z.minLength(min),
      z.maxLength(limits.maxFilesPerBatch),
      z.superRefine((files: { name: string }[], ctx) => {
        const seen = new Map<string, number>();
        files.forEach((f, i) => {
          const first = seen.get(f.name);
          if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `repeats files[${first}].name` });
          else seen.set(f.name, i);
        });
      }),
    );
}

export function addUploadsBodySchema(limits: SchemaLimits) {
  return z
    .strictObject({
      files: filesSchema(limits, 1).check(
        z.meta({ description: 'More files to upload: `expected` grows by their number (unless `renew`).' }),
      ),
      renew: optional(
        z.boolean(),
        'true: fresh forms for files already declared, whose forms expired or are about to; `expected` does not change.',
      ),
    })
    .check(z.meta({ id: 'AddUploadsRequest' }));
}

export const closeBatchBodySchema = z
  .strictObject({
    expected: optional(
      z.number().check(z.int(), z.gte(0)),
      'How many files you uploaded in all (409 if fewer than have arrived); uploads still in flight count once they arrive.',
    ),
  })
  .check(z.meta({ id: 'CloseBatchRequest' }));

export function createBatchBodySchema(limits: SchemaLimits) {
  return z
    .strictObject({
      debug: optional(z.boolean(), 'Record per-image processing logs (GET .../logs). Default false.'),
      retentionDays: optional(
        z.number().check(z.int(), z.gte(1), z.lte(limits.maxRetentionDays)),
        `Days the batch's results are kept. Default ${limits.defaultRetentionDays}.`,
      ),
      batchId: optional(batchIdSchema, 'Your own name for the batch (409 if you already have one of that name); a ULID when absent.'),
      files: optional(
        filesSchema(limits),
        'Files to upload: one presigned POST form each; their number is `expected`. Names must be distinct.',
      ),
      callbackUrl: optional(
        z.string().check(z.minLength(1), z.maxLength(2048)),
        'POSTed the summary once the batch is done, signed with `IceCat-Signature` (the answer’s `callbackSecret`); ' +
          'https to a public address only (the local stack also allows http://127.0.0.1).',
      ),
      source: z.optional(importSourceSchema),
    })
    .check(
      z.refine((b) => !(b.source && b.files), { message: 'a batch from a source takes no files', path: ['files'] }),
      z.meta({ id: 'CreateBatchRequest' }),
    );
}

const callbackStateSchema = z
  .object({
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']).check(
      z.meta({
        description:
          'pending: the batch is done and the summary not yet delivered (attempts are under way, or the reconciliation ' +
          'sweep queues the callback again when its message was lost); delivered: a 2xx answered; failed: the retry window closed.',
      }),
    ),
    attempts: z.number().check(z.int()),
    lastAttemptAt: z.nullable(isoTime),
    lastStatus: z.nullable(z.number().check(z.int())).check(z.meta({ description: 'The receiver’s HTTP status; null when none came.' })),
    lastError: z
      .nullable(z.string())
      .check(z.meta({ description: 'Why the last attempt failed (timeout, refused address, HTTP status).' })),
    deliveredAt: z.nullable(isoTime),
    gaveUpAt: z.nullable(isoTime).check(z.meta({ description: 'Set when the retry window closed without a 2xx.' })),
  })
  .check(z.meta({ id: 'CallbackDelivery' }));

const batchUsageSchema = z
  .object({
    detectLabelsCalls: z
      .number()
      .check(z.int(), z.meta({ description: 'Images classified by a DetectLabels call of their own: counts.success − counts.reused.' })),
    reused: z
      .number()
      .check(z.int(), z.meta({ description: "Images classified from the client's earlier answer for the same pixels: no call." })),
    duplicates: z.number().check(z.int(), z.meta({ description: 'Uploads of pixels already in the batch: no call.' })),
    estimatedCostUsd: dollarsSchema.check(
      z.meta({ description: "detectLabelsCalls at ICECAT_PRICE_PER_IMAGE_USD (default 0.001, Rekognition's first price tier)." }),
    ),
    savedUsd: dollarsSchema.check(z.meta({ description: 'The calls reuse and duplicates avoided, at the same price.' })),
  })
  .check(z.meta({ id: 'BatchUsage', description: 'What the batch cost in DetectLabels calls so far, and what reuse and dedupe saved.' }));

export const batchSummarySchema = z
  .object({
    batchId: z.string(),
    status: z.enum(BATCH_STATUSES).check(
      z.meta({
        description:
          'open: not closed yet; processing: closed, and an image is pending or declared files have not all arrived, or ' +
          'a POST …:redetect is classifying its images again; done: closed, nothing pending, every declared file arrived.',
      }),
    ),
    closed: z.boolean().check(z.meta({ description: 'No more uploads: by POST …:close, or once `expected` uploads arrived.' })),
    expected: z
      .nullable(z.number().check(z.int()))
      .check(z.meta({ description: 'Files declared (created with, added, or given at close); null when never said.' })),
    counts: z
      .object({
        total: z.number().check(z.int()),
        pending: z.number().check(z.int()),
        success: z.number().check(z.int()),
        fail: z.number().check(z.int()),
        duplicate: z.number().check(z.int()),
        reused: z.number().check(z.int()),
        cats: z.number().check(z.int()),
        reviewed: z.number().check(z.int()),
        corrected: z.number().check(z.int()),
      })
      .check(
        z.meta({
          description:
            'total = pending + success + fail + duplicate, always; reused, cats and reviewed are parts of success. cats ' +
            'counts isCat (a person’s verdict wins); reviewed, the images with a person’s verdict; corrected, those of ' +
            'them whose verdict differs from the machine’s at the batch’s threshold.',
        }),
      ),
    usage: batchUsageSchema,
    labels: z.nullable(z.array(z.object({ name: z.string(), images: z.number().check(z.int()) }))).check(
      z.meta({
        description:
          'GET of one done batch: its 20 most frequent labels, most images first, with how many distinct images carry each ' +
          "at the batch's cat threshold (catMinConfidence; :reclassify moves it), counted from its records. null while the " +
          'batch is not done, and in lists and write answers.',
      }),
    ),
    models: z.nullable(z.array(z.object({ name: z.string(), version: z.string(), images: z.number().check(z.int()) }))).check(
      z.meta({
        description:
          'GET of one done batch: the models that answered its classified images, most images first, with how many each: ' +
          '`rekognition-detect-labels` and its LabelModelVersion on AWS; locally the model and `<file version>+mapping.<n>`. ' +
          "An image reused from another batch counts as its original answer's model; one classified before records kept " +
          'their model as the model answering then (`unknown` where nothing says). null while the batch is not done, and in ' +
          'lists and write answers.',
      }),
    ),
    debug: z.boolean(),
    catMinConfidence: z.nullable(z.number()).check(
      z.meta({
        description:
          'The cat threshold its images are classified at: the configured one when the batch was made, then that of the last POST …:reclassify (null: a batch made before batches kept it).',
      }),
    ),
    retentionDays: z.number(),
    createdAt: isoTime,
    closedAt: z.nullable(isoTime),
    doneAt: z.nullable(isoTime).check(z.meta({ description: 'When the batch became done; set once.' })),
    expiresAt: isoTime,
    callbackUrl: z.nullable(z.string()).check(z.meta({ description: 'Where the summary is POSTed once the batch is done.' })),
    callback: z.nullable(callbackStateSchema).check(
      z.meta({
        description: 'The completion callback’s delivery, from the moment the batch is done; null before, and without callbackUrl.',
      }),
    ),
    import: z.optional(importSummarySchema),
  })
  .check(z.meta({ id: 'BatchSummary' }));

export const batchListSchema = z
  .object({
    items: z.array(batchSummarySchema),
    cursor: z.optional(z.string()).check(z.meta({ description: 'Pass as `cursor` for the next page; absent on the last page.' })),
  })
  .check(z.meta({ id: 'BatchList' }));

const uploadFormSchema = z
  .object({
    file: z.string(),
    url: z.url(),
    fields: z.record(z.string(), z.string()).check(
      z.meta({
        description: 'Form fields to send, in order, before the file field (multipart/form-data POST to url).',
      }),
    ),
  })
  .check(z.meta({ id: 'UploadForm' }));

export const uploadFormsSchema = z
  .object({
    uploads: z.array(uploadFormSchema),
    expiresAt: isoTime.check(z.meta({ description: 'When the upload forms stop working.' })),
    batch: batchSummarySchema,
  })
  .check(z.meta({ id: 'UploadForms' }));

export const createdBatchSchema = z
  .object({
    batchId: z.string(),
    uploads: z.array(uploadFormSchema),
    expiresAt: isoTime.check(z.meta({ description: 'When the upload forms stop working.' })),
    callbackSecret: z.optional(z.string()).check(z.meta({ description: 'With callbackUrl: the key of its signatures, shown only here.' })),
    batch: batchSummarySchema,
  })
  .check(z.meta({ id: 'CreatedBatch' }));

export const deletedBatchSchema = z
  .object({ batchId: z.string(), status: z.literal('deleting') })
  .check(z.meta({ id: 'DeletedBatch', description: 'The erasure runs on; the batch answers 404 from now on.' }));

export const reclassifyBodySchema = z
  .strictObject({
    catMinConfidence: z
      .number()
      .check(z.gte(0), z.lte(100))
      .check(z.meta({ description: 'The new cat threshold, 0–100: isCat is a Cat confidence at or above it.' })),
    cursor: z
      .optional(z.string().check(z.maxLength(1000)))
      .check(z.meta({ description: "An earlier answer's cursor: go on where it stopped (same catMinConfidence)." })),
  })
  .check(z.meta({ id: 'ReclassifyBody' }));

export const reclassifyResultSchema = z
  .object({
    batch: batchSummarySchema,
    cursor: z.optional(z.string()).check(
      z.meta({
        description: 'Present when the batch was larger than one request handles in time: send the same body with this cursor to go on.',
      }),
    ),
  })
  .check(z.meta({ id: 'ReclassifyResult' }));
/** The summary's shape is the domain's BatchSummary (lib/domain/summary.ts); the schema must describe exactly that shape. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const summarySchemaIsTheDomainShape: Same<z.infer<typeof batchSummarySchema>, BatchSummary> = true;
void summarySchemaIsTheDomainShape;
export type UploadForm = z.infer<typeof uploadFormSchema>;
export type CreateBatchBody = z.infer<ReturnType<typeof createBatchBodySchema>>;
export type AddUploadsBody = z.infer<ReturnType<typeof addUploadsBodySchema>>;
export type CloseBatchBody = z.infer<typeof closeBatchBodySchema>;
export type ReclassifyBody = z.infer<typeof reclassifyBodySchema>;
export type ReclassifyResult = z.infer<typeof reclassifyResultSchema>;
export type ClientBatchesQuery = z.infer<typeof clientBatchesQuerySchema>;
