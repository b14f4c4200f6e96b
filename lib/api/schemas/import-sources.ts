// The import's parts of the batch schemas (docs/design.md §16): a batch's source in POST /v1/batches and its progress
// in the summary. Apart from batches.ts, which uses them; the routes' own (report, :retry) are in imports.ts.
import * as z from 'zod/mini';
import { IMPORT_STATES } from '../../domain/import';

export const importSourceSchema = z
  .union([
    z.strictObject({
      bucket: z.string().check(z.minLength(3), z.maxLength(63), z.meta({ description: 'The bucket the images are in.' })),
      prefix: z
        .string()
        .check(z.maxLength(1024), z.meta({ description: 'Every key under it is listed (an empty prefix: the whole bucket).' })),
    }),
    z.strictObject({
      manifest: z.string().check(
        z.minLength(6),
        z.maxLength(1100),
        z.meta({
          description:
            's3://bucket/key of a CSV of bucket,key[,versionId] (keys URL-encoded, as S3 Batch Operations reads it), or of an ' +
            "S3 Inventory manifest.json (its CSV files, gzipped or not). Objects it names outside the client's sources are skipped.",
        }),
      ),
    }),
  ])
  .check(
    z.meta({
      id: 'ImportSource',
      description:
        "Classify images where they are: the source must lie inside one of the client's allowed sources (npm run " +
        'client:sources), else 403 source_not_allowed before anything is listed. Not with `files`.',
    }),
  );

export const importSummarySchema = z
  .object({
    source: importSourceSchema,
    state: z.enum(IMPORT_STATES).check(
      z.meta({
        description:
          'listing: its source is being listed; waiting-for-quota: the client’s images quota of the day is used up and the ' +
          'listing goes on at resumesAt; listed: every key was listed (the batch is closed with expected = enqueued).',
      }),
    ),
    listed: z.number().check(z.int(), z.meta({ description: 'Keys listed so far.' })),
    enqueued: z.number().check(z.int(), z.meta({ description: 'Images sent to be classified (each counted against the quota).' })),
    skipped: z.number().check(z.int(), z.meta({ description: 'Keys that are not images by name (never classified).' })),
    resumesAt: z.nullable(z.iso.datetime()).check(z.meta({ description: 'When a listing waiting for the quota goes on.' })),
  })
  .check(z.meta({ id: 'ImportProgress', description: 'Only on a batch from a source.' }));
