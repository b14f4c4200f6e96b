// The API's request and response schemas (docs/design.md §3), one file per resource; here the parts they share: ids,
// times, pages, a label, a model, dollars, an error. The handlers validate with them and GET /v1/openapi.json is
// generated from them, so the document cannot drift from what the API accepts and answers.
// zod/mini: the same core as zod's chained API, but a bundle keeps only the schema kinds and checks it uses (the
// chained classes carry every kind and the JSON Schema generator: 43-61 KB of each API function's bundle).
import '../../validation-messages';
import * as z from 'zod/mini';
import { ID_PATTERN, ID_RULE } from '../../ids';

const PAGE_LIMIT_MAX = 100;
const PAGE_LIMIT_DEFAULT = 50;

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
function parseTime(raw: string): number | undefined {
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

export const rangeCheck = z.superRefine((q: { from?: number; to?: number }, ctx) => {
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'must not be after `to`' });
  }
});

/** An optional field with its own description. */
export const optional = <T extends z.ZodMiniType>(schema: T, description: string) => z.optional(schema).check(z.meta({ description }));

export const noQuerySchema = z.strictObject({});

// Responses ----------------------------------------------------------------------------------------------------

export const isoTime = z.iso.datetime();

export const labelSchema = z.object({ name: z.string(), confidence: z.number() }).check(z.meta({ id: 'Label' }));

/** A model as every model field names it: `rekognition-detect-labels` and LabelModelVersion on AWS; locally the model and `<file version>+mapping.<n>`. */
export const modelVersionSchema = z.object({ name: z.string(), version: z.string() }).check(z.meta({ id: 'ModelVersion' }));

export const dollarsSchema = z.number().check(z.gte(0));

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().check(z.meta({ description: 'Machine-readable, e.g. invalid_parameter, unauthorized, not_found.' })),
      message: z.string(),
    }),
  })
  .check(z.meta({ id: 'Error' }));
