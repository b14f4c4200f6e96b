// The client's own: its usage and limits (GET /v1/usage), and the fingerprints it already has answers for.
import * as z from 'zod/mini';
import { fprintSchema } from './common';

/** Most fingerprints one POST /v1/fingerprints:known takes. */
const KNOWN_FINGERPRINTS_MAX = 1000;

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
export type KnownFingerprints = z.infer<typeof knownFingerprintsSchema>;
export type Usage = z.infer<typeof usageSchema>;
