// The query of a batch's images (its filters, the review and audit queues) and of the client's images across batches.
import * as z from 'zod/mini';
import { BATCH_IMAGE_STATUSES } from '../../store/batch/images';
import { CLIENT_IMAGE_STATUSES } from '../../store/client/images';
import { cursorSchema, fprintSchema, limitSchema, optional, rangeCheck, timeSchema } from './common';

const batchImageStatusSchema = z
  .enum(BATCH_IMAGE_STATUSES)
  .check(z.meta({ description: 'Only images in this status (processing: still being classified).' }));
const clientImageStatusSchema = z
  .enum(CLIENT_IMAGE_STATUSES)
  .check(z.meta({ description: 'Only images with this result (images still being classified are listed per batch).' }));

/** The longest label name a filter takes (Rekognition's are far shorter). */
const LABEL_MAX_CHARS = 100;

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
export type BatchImagesQuery = z.infer<typeof batchImagesQuerySchema>;
export type ClientImagesQuery = z.infer<typeof clientImagesQuerySchema>;
