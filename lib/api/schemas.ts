// The API's request and response schemas (docs/design.md §3). The handlers validate with them and GET /v1/openapi.json is
// generated from them, so the document cannot drift from what the API accepts and answers.
// zod/mini: the same core as zod's chained API, but a bundle keeps only the schema kinds and checks it uses (the
// chained classes carry every kind and the JSON Schema generator: 43-61 KB of each API function's bundle).
import * as z from 'zod/mini';
import { importSourceSchema, importSummarySchema } from './import-source-schemas';
import '../validation-messages';
import { EXPORT_FORMATS } from '../export/encode';
import { hasForbiddenFileNameCharacters, hasInvalidPathSegment, ID_PATTERN, ID_RULE } from '../ids';
import { DEFAULT_MAX_DISTANCE, MAX_DISTANCE_LIMIT } from '../similar/groups';
import { BATCH_GET_MAX_KEYS, BATCH_IMAGE_STATUSES } from '../store/batch/images';
import { CLIENT_IMAGE_STATUSES } from '../store/client/images';
import { BATCH_STATUSES, IMAGE_STATUSES, REVIEW_NOTE_MAX_CHARS, type BatchSummary } from '../domain';
import { LIMITS } from '../store/table/schema';

export const PAGE_LIMIT_MAX = 100;
export const PAGE_LIMIT_DEFAULT = 50;

export interface SchemaLimits {
  maxRetentionDays: number;
  defaultRetentionDays: number;
  maxFilesPerBatch: number;
  maxUploadBytes: number;
}

// Path segments ------------------------------------------------------------------------------------------------

export const batchIdSchema = z
  .string()
  .check(
    z.regex(ID_PATTERN, `must be ${ID_RULE}`),
    z.meta({ description: "The client's own name for the batch (a ULID when POST /v1/batches was given none)." }),
  );

/** Fingerprints are hex digests; the batch summary's '#BATCH' and other '#' keys can never match. */
export const fprintSchema = z
  .string()
  .check(
    z.regex(/^[A-Za-z0-9_.:=-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 _ . : = -'),
    z.meta({ description: 'Image fingerprint: hash of the decoded pixels and dimensions.' }),
  );

// Query parameters ---------------------------------------------------------------------------------------------

const EPOCH_SECONDS = /^\d{1,12}(\.\d{1,3})?$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A time as ISO-8601 (a zone-less time is UTC) or epoch seconds, to epoch ms. */
export function parseTime(raw: string): number | undefined {
  if (EPOCH_SECONDS.test(raw)) return Math.round(Number(raw) * 1000);
  if (!ISO_8601.test(raw)) return undefined;
  const zoned = raw.length > 10 && !/(Z|[+-]\d{2}:?\d{2})$/.test(raw) ? `${raw}Z` : raw;
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? undefined : ms;
}

export const timeSchema = z.pipe(
  z.string().check(
    z.meta({
      description: 'ISO-8601 (e.g. 2024-05-01T12:00:00Z; without a zone, UTC) or epoch seconds (e.g. 1714564800).',
      examples: ['2024-05-01T12:00:00Z', '1714564800'],
    }),
  ),
  z.transform((raw: string, ctx) => {
    const ms = parseTime(raw);
    if (ms === undefined) {
      ctx.issues.push({ code: 'custom', message: 'must be an ISO-8601 time or epoch seconds', input: raw });
      return z.NEVER;
    }
    return ms;
  }),
);

export const limitSchema = z
  ._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(PAGE_LIMIT_MAX)), PAGE_LIMIT_DEFAULT)
  .check(z.meta({ description: `Most items in the page (1-${PAGE_LIMIT_MAX}).` }));

export const cursorSchema = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(2048),
    z.meta({ description: 'The `cursor` of the previous page, with the same filters; absent for the first page.' }),
  );

const batchImageStatusSchema = z
  .enum(BATCH_IMAGE_STATUSES)
  .check(z.meta({ description: 'Only images in this status (processing: still being classified).' }));
const clientImageStatusSchema = z
  .enum(CLIENT_IMAGE_STATUSES)
  .check(z.meta({ description: 'Only images with this result (images still being classified are listed per batch).' }));

const rangeCheck = z.superRefine((q: { from?: number; to?: number }, ctx) => {
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'must not be after `to`' });
  }
});

/** An optional field with its own description. */
const optional = <T extends z.ZodMiniType>(schema: T, description: string) => z.optional(schema).check(z.meta({ description }));

/** The longest label name a filter takes (Rekognition's are far shorter). */
export const LABEL_MAX_CHARS = 100;

/** label=Dog&label=Cat (API Gateway joins a repeated parameter with commas) or label=Dog,Cat: the names, trimmed. */
const labelsSchema = z.pipe(
  z.string().check(z.meta({ examples: ['Dog', 'Dog,Cat'] })),
  z.transform((raw: string, ctx) => {
    const names = raw.split(',').map((n) => n.trim());
    if (names.some((n) => n.length === 0 || n.length > LABEL_MAX_CHARS)) {
      ctx.issues.push({ code: 'custom', message: `each label must be 1-${LABEL_MAX_CHARS} characters`, input: raw });
      return z.NEVER;
    }
    return [...new Set(names)];
  }),
);

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * A wall-clock time as a camera writes it (no zone), filled out to `YYYY-MM-DDTHH:MM:SS`: the missing parts as early
 * as they go for `from`, as late for `to`, so a bound is inclusive.
 */
const wallClockSchema = (end: 'from' | 'to') =>
  z.pipe(
    z.string().check(z.meta({ examples: ['2024-06-01', '2024-06-01T06:30:00'] })),
    z.transform((raw: string, ctx) => {
      const m = WALL_CLOCK.exec(raw);
      const [month, day, hour, minute, second] = (m ?? []).slice(2).map((v) => (v === undefined ? undefined : Number(v)));
      if (!m || month! < 1 || month! > 12 || day! < 1 || day! > 31 || (hour ?? 0) > 23 || (minute ?? 0) > 59 || (second ?? 0) > 59) {
        ctx.issues.push({ code: 'custom', message: 'must be a wall-clock time YYYY-MM-DD[THH:MM[:SS]] without a zone', input: raw });
        return z.NEVER;
      }
      const fill = end === 'from' ? 'T00:00:00' : 'T23:59:59';
      return raw.length === 10 ? raw + fill : raw.length === 16 ? `${raw}:${end === 'from' ? '00' : '59'}` : raw;
    }),
  );

const CONFIDENCE_RULE = 'must be a number from 0 to 100';

/** A confidence as a query parameter: 0–100, digits and an optional fraction only. */
const confidenceSchema = z
  .pipe(z.string().check(z.regex(/^\d{1,3}(\.\d{1,4})?$/, CONFIDENCE_RULE), z.meta({ examples: ['80'] })), z.transform(Number))
  .check(z.refine((n: number) => n >= 0 && n <= 100, CONFIDENCE_RULE));

/** cat=true|false as a query parameter. */
const catFilterSchema = z.pipe(
  z.enum(['true', 'false']),
  z.transform((v: 'true' | 'false') => v === 'true'),
);

/** The review queue's filter and order (docs/design.md §10); they go together, and with nothing else but the page. */
const reviewQueueCheck = z.superRefine((q: Record<string, unknown>, ctx) => {
  if (q.audit === 'pending') {
    for (const name of [
      'review',
      'order',
      'status',
      'cat',
      'fileName',
      'from',
      'to',
      'label',
      'minConfidence',
      'capturedFrom',
      'capturedTo',
    ]) {
      if (q[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'cannot be combined with audit=pending' });
    }
    return;
  }
  if (q.review === 'pending' && q.order === 'captured') {
    ctx.addIssue({ code: 'custom', path: ['order'], message: 'the review queue is ordered by uncertainty: send order=uncertain or none' });
  }
  if (q.order === 'uncertain' && q.review !== 'pending') {
    ctx.addIssue({ code: 'custom', path: ['order'], message: 'uncertain orders the review queue: send it with review=pending' });
  }
  if (q.review === 'pending') {
    for (const name of ['status', 'cat', 'fileName', 'from', 'to', 'label', 'minConfidence', 'capturedFrom', 'capturedTo']) {
      if (q[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'cannot be combined with review=pending' });
    }
  }
});

export const batchImagesQuerySchema = z
  .strictObject({
    review: optional(
      z.enum(['pending']),
      '`pending`: only classified images no person has reviewed yet (the review queue), those whose cat confidence is ' +
        "nearest the batch's threshold first (order=uncertain, the default and only order of the queue). Combines with " +
        'limit and cursor only; a cursor is good until the batch is re-thresholded.',
    ),
    audit: optional(
      z.enum(['pending']),
      "`pending`: the audit queue, images drawn into the batch's audit sample (POST …/audit) no person has reviewed yet, " +
        "in random order (the draw's, stable across pages). Combines with limit and cursor only.",
    ),
    order: optional(
      z.enum(['uncertain', 'captured']),
      "`uncertain` (with review=pending): cat confidence nearest the batch's threshold first. `captured`: by capture time, " +
        'oldest first (the images with a capture time only; served by the batch-captured index).',
    ),
    status: z.optional(batchImageStatusSchema),
    cat: optional(catFilterSchema, '`true`: only cats (classified, cat found); `false`: only classified non-cats.'),
    fileName: optional(
      z.string().check(z.minLength(1), z.maxLength(1024)),
      'Only the image uploaded under this file name (exact, case-sensitive, folders included: `trip/IMG_1.jpg`), whether ' +
        'its first upload or a later duplicate of it (one of its `duplicateFiles`).',
    ),
    from: optional(timeSchema, 'Uploaded at or after this time.'),
    to: optional(timeSchema, 'Uploaded at or before this time.'),
    capturedFrom: optional(
      wallClockSchema('from'),
      'Captured at or after this wall-clock time, as the camera wrote it (no zone): 2024-06-01, 2024-06-01T06:30 or ' +
        '2024-06-01T06:30:00. Only images with a capture time; by capture time.',
    ),
    capturedTo: optional(wallClockSchema('to'), 'Captured at or before this wall-clock time (inclusive: 2024-06-01 takes the whole day).'),
    label: optional(
      labelsSchema,
      `Only images with this label (case-insensitive), at or above minConfidence. Repeat it (label=Dog&label=Cat) or ` +
        `separate names with commas for any of them; each name at most ${LABEL_MAX_CHARS} characters.`,
    ),
    minConfidence: optional(
      confidenceSchema,
      'With label: the least confidence, 0–100 (default: any stored label, i.e. REKOGNITION_MIN_CONFIDENCE and up).',
    ),
    limit: limitSchema,
    cursor: z.optional(cursorSchema),
  })
  .check(
    rangeCheck,
    reviewQueueCheck,
    z.superRefine((q: { label?: string[]; minConfidence?: number; capturedFrom?: string; capturedTo?: string }, ctx) => {
      if (q.minConfidence !== undefined && q.label === undefined)
        ctx.addIssue({ code: 'custom', path: ['minConfidence'], message: 'needs `label`' });
      if (q.capturedFrom !== undefined && q.capturedTo !== undefined && q.capturedFrom > q.capturedTo) {
        ctx.addIssue({ code: 'custom', path: ['capturedFrom'], message: 'must not be after `capturedTo`' });
      }
    }),
  );

export const clientImagesQuerySchema = z
  .strictObject({
    status: z.optional(clientImageStatusSchema),
    cat: optional(catFilterSchema, '`true`: only cats (classified, cat found); `false`: only classified non-cats.'),
    fprint: optional(fprintSchema, 'Only this image, across all the client’s batches.'),
    from: optional(timeSchema, 'Uploaded at or after this time.'),
    to: optional(timeSchema, 'Uploaded at or before this time.'),
    limit: limitSchema,
    cursor: z.optional(cursorSchema),
  })
  .check(rangeCheck);

export const logsQuerySchema = z
  .strictObject({
    from: optional(timeSchema, 'Logged at or after this time.'),
    to: optional(timeSchema, 'Logged at or before this time.'),
    limit: limitSchema,
    cursor: z.optional(cursorSchema),
  })
  .check(rangeCheck);

export const clientBatchesQuerySchema = z
  .strictObject({
    status: optional(z.enum(BATCH_STATUSES), 'Only batches in this status.'),
    from: optional(timeSchema, 'Created at or after this time.'),
    to: optional(timeSchema, 'Created at or before this time.'),
    limit: limitSchema,
    cursor: z.optional(cursorSchema),
  })
  .check(rangeCheck);

export const noQuerySchema = z.strictObject({});

// Bodies -------------------------------------------------------------------------------------------------------

/** A file name becomes the last part of uploads/{clientId}/{batchId}/{fileName}: folders allowed, no escaping them. */
export const fileNameSchema = z.string().check(
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

export const reviewBodySchema = z
  .strictObject({
    isCat: z.boolean().check(z.meta({ description: 'Your verdict: true, the image shows a cat; false, it does not.' })),
    note: optional(
      z.string().check(z.maxLength(REVIEW_NOTE_MAX_CHARS)),
      `Why, for whoever reads it later (at most ${REVIEW_NOTE_MAX_CHARS} characters; an empty note is none).`,
    ),
  })
  .check(z.meta({ id: 'ReviewRequest' }));

export const batchGetBodySchema = z
  .strictObject({
    fprints: z.array(fprintSchema).check(z.minLength(1), z.maxLength(BATCH_GET_MAX_KEYS)),
  })
  .check(z.meta({ id: 'BatchGetRequest' }));

/** Most fingerprints one POST /v1/fingerprints:known takes. */
export const KNOWN_FINGERPRINTS_MAX = 1000;

export const knownFingerprintsBodySchema = z
  .strictObject({
    fprints: z.array(fprintSchema).check(
      z.minLength(1),
      z.maxLength(KNOWN_FINGERPRINTS_MAX),
      z.meta({
        description: `Fingerprints computed as the ingest computes them (the CLI's --dry-run does), 1-${KNOWN_FINGERPRINTS_MAX}.`,
      }),
    ),
  })
  .check(z.meta({ id: 'KnownFingerprintsRequest' }));

// Responses ----------------------------------------------------------------------------------------------------

const isoTime = z.iso.datetime();

export const labelSchema = z.object({ name: z.string(), confidence: z.number() }).check(z.meta({ id: 'Label' }));

/** A model as every model field names it: `rekognition-detect-labels` and LabelModelVersion on AWS; locally the model and `<file version>+mapping.<n>`. */
export const modelVersionSchema = z.object({ name: z.string(), version: z.string() }).check(z.meta({ id: 'ModelVersion' }));

export const imageSchema = z
  .object({
    batchId: z.string(),
    fprint: z.string(),
    fileName: z.nullable(z.string()),
    status: z.enum(IMAGE_STATUSES),
    isCat: z.nullable(z.boolean()).check(z.meta({ description: 'null until classified.' })),
    catConfidence: z
      .nullable(z.number())
      .check(z.meta({ description: 'The best Cat confidence found (0 when none); null until classified or in client-wide listings.' })),
    labels: z.array(labelSchema),
    cats: z
      .array(
        z.object({ confidence: z.number(), box: z.object({ left: z.number(), top: z.number(), width: z.number(), height: z.number() }) }),
      )
      .check(z.meta({ description: "Cat instances, boxes as ratios of the image's sides (Rekognition's BoundingBox)." })),
    uploadedAt: z.nullable(isoTime),
    classifiedAt: z.nullable(isoTime),
    duplicates: z
      .number()
      .check(z.int())
      .check(z.meta({ description: 'Later uploads of the same pixels to this batch.' })),
    duplicateFiles: z.array(z.string()).check(
      z.meta({
        description: `The later uploads' file names, sorted; only the first ${LIMITS.dupFiles} are kept, so past them \`duplicates\` is larger.`,
      }),
    ),
    reused: z.boolean().check(
      z.meta({
        description: "Copied from the client's earlier classification of the same pixels in another batch: no DetectLabels call.",
      }),
    ),
    machineIsCat: z.nullable(z.boolean()).check(
      z.meta({
        description:
          "The detector's verdict at the batch's threshold (`isCat` is the person's verdict when there is one); null until classified.",
      }),
    ),
    previous: z
      .nullable(
        z.object({ model: modelVersionSchema, isCat: z.boolean(), catConfidence: z.number() }).check(z.meta({ id: 'PreviousAnswer' })),
      )
      .check(
        z.meta({
          description:
            "The machine's answer a POST …:redetect replaced: the model that gave it, its verdict at the batch's threshold " +
            'and its best Cat confidence; null when never re-detected (and in listings read from an index).',
        }),
      ),
    review: z
      .nullable(
        z
          .object({
            isCat: z.boolean(),
            note: z.nullable(z.string()),
            reviewedAt: isoTime,
          })
          .check(z.meta({ id: 'Review' })),
      )
      .check(
        z.meta({
          description:
            "A person's verdict (PUT …/review), which `isCat` follows; its duplicates share it, and a later batch of the " +
            'client that holds the same pixels carries it. null when none.',
        }),
      ),
    audit: z
      .nullable(
        z
          .object({
            drawnAt: isoTime,
            stratum: z.enum(['cat', 'notCat']),
          })
          .check(z.meta({ id: 'AuditMark' })),
      )
      .check(
        z.meta({
          description:
            "Set when the image was drawn into its batch's audit sample (POST …/audit): when, and the machine's verdict it " +
            'was drawn under (`cat`, `notCat`). Shown by the image itself, images:batchGet and the queues ' +
            '(review=pending, audit=pending); null elsewhere in listings, whose indexes do not project it.',
        }),
      ),
    capturedAt: z.nullable(z.string()).check(
      z.meta({
        description:
          "When the photo was taken, from its EXIF (DateTimeOriginal, else CreateDate): the camera's wall clock, with its offset " +
          'when the camera wrote one (2024-06-01T06:30:00+02:00), else without a zone (2024-06-01T06:30:00). null when absent or ' +
          'impossible (0000:00:00, before 1990, more than a day after the upload), and in listings served by the older indexes ' +
          '(status, upload time, client-wide), which do not project it.',
      }),
    ),
    camera: z.nullable(z.string()).check(z.meta({ description: 'EXIF Make and Model ("Reconyx HC600"); null when absent.' })),
    location: z
      .nullable(z.object({ lat: z.number(), lon: z.number() }))
      .check(z.meta({ description: 'EXIF GPS position in decimal degrees; null when absent or impossible (a latitude beyond ±90).' })),
    model: z.nullable(modelVersionSchema).check(
      z.meta({
        description:
          "The model that gave the answer (a reused one: its original's): `rekognition-detect-labels` and DetectLabels' " +
          'LabelModelVersion on AWS; locally the model and `<file version>+mapping.<n>`. null until classified, and in ' +
          'listings served by indexes, which do not project it.',
      }),
    ),
    error: z.nullable(z.object({ code: z.string(), message: z.string() })),
    thumbnailUrl: z.nullable(z.string()).check(
      z.meta({
        description: 'Presigned GET of a WebP at most 256 px a side, valid 15 to 20 minutes; null when the image was never decoded.',
      }),
    ),
    imageUrl: z.nullable(z.string()).check(
      z.meta({
        description: 'Presigned GET of the classified image (a duplicate: its original), valid 15 to 20 minutes; null unless classified.',
      }),
    ),
  })
  .check(z.meta({ id: 'Image' }));

export const imageListSchema = z
  .object({
    items: z.array(imageSchema),
    cursor: z.optional(z.string()).check(z.meta({ description: 'Pass as `cursor` for the next page; absent on the last page.' })),
  })
  .check(z.meta({ id: 'ImageList' }));

export const logEntrySchema = z
  .object({
    batchId: z.string(),
    fprint: z.string(),
    fileName: z.nullable(z.string()),
    status: z.nullable(z.enum(IMAGE_STATUSES)),
    loggedAt: z.nullable(isoTime),
    lines: z.array(z.string()),
  })
  .check(z.meta({ id: 'LogEntry' }));

export const logListSchema = z.object({ items: z.array(logEntrySchema), cursor: z.optional(z.string()) }).check(z.meta({ id: 'LogList' }));

export const callbackStateSchema = z
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

export const dollarsSchema = z.number().check(z.gte(0));

export const batchUsageSchema = z
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

export const uploadFormSchema = z
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

export const exportQuerySchema = z.strictObject({
  format: z._default(z.enum(EXPORT_FORMATS), 'csv').check(
    z.meta({
      description:
        'csv (RFC 4180, with a header), jsonl (JSON Lines), or megadetector: a MegaDetector results file, format 1.6 ' +
        '(lila.science/megadetector-output-format), as Timelapse and AddaxAI read it.',
    }),
  ),
});

const MAX_DISTANCE_RULE = `must be a whole number of bits from 0 to ${MAX_DISTANCE_LIMIT}`;

/** Bits of the 64-bit pHash, at most MAX_DISTANCE_LIMIT; a query parameter, so digits only: no sign, exponent, fraction or blank. */
export const maxDistanceSchema = z
  .pipe(
    z.string().check(
      z.regex(/^\d{1,2}$/, MAX_DISTANCE_RULE),
      z.meta({
        description:
          `Most bits two images' 64-bit perceptual hashes may differ in to be linked, 0–${MAX_DISTANCE_LIMIT} (default ` +
          `${DEFAULT_MAX_DISTANCE}). Past ${MAX_DISTANCE_LIMIT}, unrelated photos group by chance.`,
        examples: [String(DEFAULT_MAX_DISTANCE)],
      }),
    ),
    z.transform(Number),
  )
  .check(z.refine((bits: number) => bits <= MAX_DISTANCE_LIMIT, MAX_DISTANCE_RULE));

export const similarQuerySchema = z.strictObject({ maxDistance: z.optional(maxDistanceSchema) });

export const similarGroupSchema = z
  .object({
    fprints: z.array(z.string()).check(z.meta({ description: 'The images of the group (two or more), in fingerprint order.' })),
    maxDistance: z
      .number()
      .check(z.int(), z.gte(0), z.lte(MAX_DISTANCE_LIMIT))
      .check(
        z.meta({
          description:
            'The largest link that holds the group together: the smallest maxDistance at which these images still form one ' +
            'group. Two members of a chain can differ by more.',
        }),
      ),
    fileNames: z.array(z.nullable(z.string())).check(z.meta({ description: "Each image's file name, in the order of `fprints`." })),
  })
  .check(z.meta({ id: 'SimilarGroup' }));

export const similarGroupsSchema = z.object({ groups: z.array(similarGroupSchema) }).check(z.meta({ id: 'SimilarGroups' }));

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

export const knownFingerprintsSchema = z
  .object({
    known: z.array(z.string()).check(
      z.meta({
        description:
          'The asked fingerprints the client already has a classification of, within retention, in any of its batches ' +
          "(an upload of them is reused, not sent to DetectLabels), distinct, in the order asked. Only the caller's own " +
          "images count: another client's is simply unknown.",
      }),
    ),
    pricePerImageUsd: z
      .number()
      .check(
        z.gte(0),
        z.meta({ description: 'The price of one DetectLabels call this service estimates with (ICECAT_PRICE_PER_IMAGE_USD).' }),
      ),
  })
  .check(z.meta({ id: 'KnownFingerprints' }));
export const usageSchema = z
  .object({
    clientId: z.string(),
    day: z.string().check(z.meta({ description: 'The UTC day (YYYY-MM-DD) the images counts are of.' })),
    limits: z.object({
      requestsPerSecond: z.number().check(z.meta({ description: 'API requests per second, sustained; beyond it 429 with Retry-After.' })),
      burst: z.number().check(z.meta({ description: 'API requests at once after a quiet while: twice the rate.' })),
      imagesPerDay: z
        .number()
        .check(z.meta({ description: 'Uploads accepted per UTC day; beyond it each ends as a fail record with code QuotaExceeded.' })),
    }),
    images: z.object({
      accepted: z.number().check(z.meta({ description: 'Uploads of the day counted against the quota.' })),
      rejected: z
        .number()
        .check(z.meta({ description: 'Uploads of the day beyond the quota (QuotaExceeded records, objects under failed/).' })),
      remaining: z.number().check(z.meta({ description: 'Uploads still accepted today.' })),
    }),
    resetsAt: z.string().check(z.meta({ description: 'When the images quota starts afresh: the next 00:00 UTC.' })),
    pricePerImageUsd: z.number().check(
      z.gte(0),
      z.meta({
        description: 'The price of one DetectLabels call this service estimates with (ICECAT_PRICE_PER_IMAGE_USD): what a new image costs.',
      }),
    ),
  })
  .check(z.meta({ id: 'Usage', description: "The client's limits and today's use of them (docs/design.md §11)." }));
export const agreementSchema = z
  .object({
    reviewed: z
      .number()
      .check(z.int())
      .check(z.meta({ description: 'Images with a person’s verdict.' })),
    agree: z
      .number()
      .check(z.int())
      .check(z.meta({ description: 'Of them, those whose verdict is the machine’s at the batch’s threshold.' })),
    precision: z
      .nullable(z.number())
      .check(
        z.meta({ description: 'Of the machine’s cats among them, the share people called cats (0–1); null when the machine called none.' }),
      ),
    recall: z
      .nullable(z.number())
      .check(z.meta({ description: 'Of the people’s cats, the share the machine called cats (0–1); null when people called none.' })),
    suggestedCatMinConfidence: z.nullable(z.number()).check(
      z.meta({
        description:
          'The threshold at which the machine’s verdicts would have agreed with the most reviews (ties: the lowest), in ' +
          'hundredths of a percent (0.01–100), to send to POST …:reclassify; null without reviews.',
      }),
    ),
    catMinConfidence: z.number().check(z.meta({ description: 'The batch’s threshold now, which `agree`, precision and recall are at.' })),
  })
  .check(z.meta({ id: 'Agreement' }));

export const batchGetResultSchema = z
  .object({
    items: z.array(imageSchema),
    notFound: z.array(z.string()).check(z.meta({ description: 'Requested fingerprints with no visible image.' })),
  })
  .check(z.meta({ id: 'BatchGetResult' }));

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().check(z.meta({ description: 'Machine-readable, e.g. invalid_parameter, unauthorized, not_found.' })),
      message: z.string(),
    }),
  })
  .check(z.meta({ id: 'Error' }));

export type ImageAnswer = z.infer<typeof imageSchema>;
export type LogEntry = z.infer<typeof logEntrySchema>;
/** The summary's shape is the domain's BatchSummary (lib/domain.ts); the schema must describe exactly that shape. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const summarySchemaIsTheDomainShape: Same<z.infer<typeof batchSummarySchema>, BatchSummary> = true;
void summarySchemaIsTheDomainShape;
export type UploadForm = z.infer<typeof uploadFormSchema>;
export type CreateBatchBody = z.infer<ReturnType<typeof createBatchBodySchema>>;
export type AddUploadsBody = z.infer<ReturnType<typeof addUploadsBodySchema>>;
export type CloseBatchBody = z.infer<typeof closeBatchBodySchema>;
export type ReclassifyBody = z.infer<typeof reclassifyBodySchema>;
export type ReviewBody = z.infer<typeof reviewBodySchema>;
export type AgreementAnswer = z.infer<typeof agreementSchema>;
export type ReclassifyResult = z.infer<typeof reclassifyResultSchema>;
export type ClientBatchesQuery = z.infer<typeof clientBatchesQuerySchema>;
export type BatchImagesQuery = z.infer<typeof batchImagesQuerySchema>;
export type ClientImagesQuery = z.infer<typeof clientImagesQuerySchema>;
export type LogsQuery = z.infer<typeof logsQuerySchema>;
export type SimilarQuery = z.infer<typeof similarQuerySchema>;
export type SimilarGroups = z.infer<typeof similarGroupsSchema>;
export type KnownFingerprints = z.infer<typeof knownFingerprintsSchema>;
export type Usage = z.infer<typeof usageSchema>;
