// A person's verdict on an image (PUT …/review) and how far the machine agrees with the batch's (GET …/agreement).
import * as z from 'zod/mini';
import { REVIEW_NOTE_MAX_CHARS } from '../../domain/review';
import { optional } from './common';

export const reviewBodySchema = z
  .strictObject({
    isCat: z.boolean().check(z.meta({ description: 'Your verdict: true, the image shows a cat; false, it does not.' })),
    note: optional(
      z.string().check(z.maxLength(REVIEW_NOTE_MAX_CHARS)),
      `Why, for whoever reads it later (at most ${REVIEW_NOTE_MAX_CHARS} characters; an empty note is none).`,
    ),
  })
  .check(z.meta({ id: 'ReviewRequest' }));
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
export type ReviewBody = z.infer<typeof reviewBodySchema>;
export type AgreementAnswer = z.infer<typeof agreementSchema>;
