// The schemas of an import's own routes (docs/api.md "Imports"): GET …/report and POST …:retry.
import * as z from 'zod/mini';
import { batchSummarySchema } from './batches';

export const reportQuerySchema = z.strictObject({
  format: z._default(z.enum(['s3-batch-operations']), 's3-batch-operations').check(
    z.meta({
      description:
        "S3 Batch Operations' completion report CSV: Bucket, Key (URL-encoded), VersionId, TaskStatus, ErrorCode, " +
        'HTTPStatusCode, ResultMessage, no header row.',
    }),
  ),
});

export const retryResultSchema = z
  .object({
    batchId: z.string(),
    resubmitted: z.number().check(z.int(), z.meta({ description: 'Failed imported images sent again (each counted against the quota).' })),
    batch: batchSummarySchema,
  })
  .check(z.meta({ id: 'RetryResult' }));
