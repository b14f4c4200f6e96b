// Near-duplicate groups (GET …/similar): the distance asked for and the groups answered.
import * as z from 'zod/mini';
import { DEFAULT_MAX_DISTANCE, MAX_DISTANCE_LIMIT } from '../../similar/groups';

const MAX_DISTANCE_RULE = `must be a whole number of bits from 0 to ${MAX_DISTANCE_LIMIT}`;

/** Bits of the 64-bit pHash, at most MAX_DISTANCE_LIMIT; a query parameter, so digits only: no sign, exponent, fraction or blank. */
const maxDistanceSchema = z
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

const similarGroupSchema = z
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
export type SimilarQuery = z.infer<typeof similarQuerySchema>;
export type SimilarGroups = z.infer<typeof similarGroupsSchema>;
