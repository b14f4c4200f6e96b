// The schemas of the audit sample and its accuracy (docs/accuracy.md; design §13): POST …/audit and GET …/accuracy.
// Beside the other resources' schemas in this folder.
import * as z from 'zod/mini';
import { AUDIT_SIZE_MAX, STRATA } from '../../review/audit-sample';
import { modelVersionSchema } from './common';

export const auditBodySchema = z
  .strictObject({
    size: z
      .number()
      .check(z.int(), z.gte(1), z.lte(AUDIT_SIZE_MAX))
      .check(
        z.meta({
          description: `Images to draw, 1–${AUDIT_SIZE_MAX}; when fewer are left undrawn, all of them.`,
        }),
      ),
  })
  .check(z.meta({ id: 'AuditRequest' }));

const stratumSchema = z.enum(STRATA).check(
  z.meta({
    description: "The machine's verdict the image was drawn under: `cat` (machineIsCat true) or `notCat` (false).",
  }),
);

const count = (description: string) => z.number().check(z.int(), z.meta({ description }));

export const auditResultSchema = z
  .object({
    batchId: z.string(),
    seed: count('The seed of this draw: the same seed over the same images draws the same sample.'),
    drawn: count('Images this request drew (fewer than asked when fewer were left).'),
    sampled: count('Images in the sample now, every draw included.'),
    strata: z.array(
      z.object({
        stratum: stratumSchema,
        images: count("The batch's classified images in this stratum (duplicates counted once)."),
        sampled: count('Of them, in the sample now.'),
        drawn: count('Of them, drawn by this request.'),
      }),
    ),
  })
  .check(z.meta({ id: 'AuditResult' }));

const estimate = z
  .object({
    estimate: z.number(),
    low: z.number().check(z.meta({ description: 'Lower bound of the 95 % interval.' })),
    high: z.number().check(z.meta({ description: 'Upper bound of the 95 % interval.' })),
  })
  .check(z.meta({ id: 'Estimate' }));

const estimateSchema = (description: string) =>
  z.nullable(estimate).check(z.meta({ description: `${description} null when no audited review supports it.` }));

export const accuracySchema = z
  .object({
    sampled: count('Images in the audit sample.'),
    reviewed: count('Of them, reviewed: only these reviews enter the estimates.'),
    strata: z.array(
      z.object({
        stratum: stratumSchema,
        images: count("The batch's classified images in this stratum at the last draw: its weight."),
        sampled: count('Of them, in the sample.'),
        reviewed: count('Of those, reviewed.'),
        agree: count("Of those, the person's verdict is the stratum's (a machine-cat called a cat, a machine-non-cat not one)."),
      }),
    ),
    precision: estimateSchema('Of the machine’s cats, the share that are cats (0–1).'),
    recall: estimateSchema('Of the batch’s cats, the share the machine called cats (0–1); null too when no reviewed image is a cat.'),
    accuracy: estimateSchema('Of the batch’s images, the share whose machine verdict is right (0–1).'),
    cats: estimateSchema('How many cats the batch truly holds (images).'),
    models: z.optional(
      z
        .array(
          z
            .object({
              model: modelVersionSchema,
              sampled: count('Audited images this model answered (now, or before a re-detection replaced its answer).'),
              reviewed: count('Of them, reviewed: the reviews its estimates rest on.'),
              precision: estimateSchema('Of this model’s cats, the share that are cats (0–1).'),
              recall: estimateSchema('Of the batch’s cats, the share this model called cats (0–1).'),
              accuracy: estimateSchema('Of the batch’s images, the share whose verdict by this model is right (0–1).'),
              cats: estimateSchema('How many cats the batch truly holds, as this model’s post-strata estimate it (images).'),
            })
            .check(z.meta({ id: 'ModelAccuracy' })),
        )
        .check(
          z.meta({
            description:
              'After a POST …:redetect, when audited images keep the answer another model gave (`previous`): each model’s ' +
              'estimates on the same audited reviews, by its own verdicts (post-stratified by them, each review weighted by ' +
              'its draw stratum, each post-stratum by the batch’s count of that verdict; docs/accuracy.md). The models of the ' +
              'answers the images have now first. Absent when no audited image has a previous answer.',
          }),
        ),
    ),
  })
  .check(
    z.meta({
      id: 'Accuracy',
      description:
        "The machine's accuracy on the batch, estimated from the audit sample's reviews (stratified by the machine's " +
        'verdict, each stratum weighted by its share of the batch); 95 % intervals from the beta-binomial predictive ' +
        '(docs/accuracy.md).',
    }),
  );

export type AuditBody = z.infer<typeof auditBodySchema>;
export type AuditResult = z.infer<typeof auditResultSchema>;
export type AccuracyAnswer = z.infer<typeof accuracySchema>;
