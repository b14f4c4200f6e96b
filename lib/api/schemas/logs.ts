// A debug batch's per-image processing logs (GET …/logs).
import * as z from 'zod/mini';
import { IMAGE_STATUSES } from '../../domain/image';
import { cursorSchema, isoTime, limitSchema, optional, rangeCheck, timeSchema } from './common';

export const logsQuerySchema = z
  .strictObject({
    from: optional(timeSchema, 'Logged at or after this time.'),
    to: optional(timeSchema, 'Logged at or before this time.'),
    limit: limitSchema,
    cursor: z.optional(cursorSchema),
  })
  .check(rangeCheck);

const logEntrySchema = z
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
export type LogEntry = z.infer<typeof logEntrySchema>;
export type LogsQuery = z.infer<typeof logsQuerySchema>;
