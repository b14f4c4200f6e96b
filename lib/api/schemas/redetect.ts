// The schemas of POST …:redetect and GET …/changes (docs/api.md "Re-detect").
import * as z from 'zod/mini';
import { batchSummarySchema } from './batches';
import { cursorSchema, dollarsSchema, limitSchema, modelVersionSchema } from './common';

export const redetectBodySchema = z
  .strictObject({
    dryRun: z.optional(z.boolean()).check(z.meta({ description: 'Only count and price the images: nothing changes, nothing is queued.' })),
    all: z
      .optional(z.boolean())
      .check(z.meta({ description: 'Every classified image, not only those answered by another model than the one answering now.' })),
  })
  .check(z.meta({ id: 'RedetectBody' }));

export const redetectResultSchema = z
  .object({
    dryRun: z.boolean(),
    images: z
      .number()
      .check(z.int(), z.meta({ description: 'Uploads whose answer is asked again: the distinct images chosen and their duplicates.' })),
    newCalls: z
      .number()
      .check(z.int(), z.meta({ description: 'DetectLabels calls: one per distinct image chosen (a duplicate follows its original).' })),
    estimatedCostUsd: dollarsSchema.check(z.meta({ description: 'newCalls at the configured price per image.' })),
    batch: batchSummarySchema,
  })
  .check(z.meta({ id: 'RedetectResult' }));

const answerSchema = z
  .object({
    model: modelVersionSchema,
    isCat: z.boolean().check(z.meta({ description: "The machine's verdict at the batch's threshold (a person's review is not it)." })),
    catConfidence: z.number().check(z.meta({ description: 'The best Cat confidence of the answer, 0 when none.' })),
  })
  .check(z.meta({ id: 'MachineAnswer' }));

const changeSchema = z
  .object({
    fprint: z.string(),
    fileName: z.nullable(z.string()),
    change: z.enum(['cat → not cat', 'not cat → cat']),
    previous: answerSchema,
    current: answerSchema,
  })
  .check(z.meta({ id: 'VerdictChange' }));

export const changeListSchema = z
  .object({ items: z.array(changeSchema), cursor: z.optional(z.string()) })
  .check(z.meta({ id: 'VerdictChangeList' }));

export const changesQuerySchema = z.strictObject({ limit: limitSchema, cursor: z.optional(cursorSchema) });

export type RedetectBody = z.infer<typeof redetectBodySchema>;
export type RedetectResult = z.infer<typeof redetectResultSchema>;
export type VerdictChange = z.infer<typeof changeSchema>;
export type ChangesQuery = z.infer<typeof changesQuerySchema>;
