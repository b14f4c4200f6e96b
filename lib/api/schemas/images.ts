// An image's answer, a page of them, and many of a batch by fingerprint (POST …/images:batchGet).
import * as z from 'zod/mini';
import { IMAGE_STATUSES } from '../../domain/image';
import { BATCH_GET_MAX_KEYS } from '../../store/table/query';
import { LIMITS } from '../../store/table/schema';
import { fprintSchema, isoTime, labelSchema, modelVersionSchema } from './common';

export const batchGetBodySchema = z
  .strictObject({
    fprints: z.array(fprintSchema).check(z.minLength(1), z.maxLength(BATCH_GET_MAX_KEYS)),
  })
  .check(z.meta({ id: 'BatchGetRequest' }));

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
            'and its best Cat confidence; null when never re-detected.',
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

export const batchGetResultSchema = z
  .object({
    items: z.array(imageSchema),
    notFound: z.array(z.string()).check(z.meta({ description: 'Requested fingerprints with no visible image.' })),
  })
  .check(z.meta({ id: 'BatchGetResult' }));

export type ImageAnswer = z.infer<typeof imageSchema>;
