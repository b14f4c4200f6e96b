// Checked by `npm run typecheck`, not run: what the API's response schemas produce must be a value of the clients'
// contract, so a field the server renames or retypes breaks the build instead of the CLI or the web page.
import type * as z from 'zod';
import type {
  Accuracy,
  Agreement,
  ApiErrorBody,
  AuditResult,
  BatchSummary,
  CreatedBatch,
  Image,
  LogEntry,
  MoreUploads,
  Page,
  Reclassified,
  Redetected,
  RetriedImport,
  SimilarGroups,
  Usage,
  VerdictChange,
} from '../../lib/api/client-contract';
import type { accuracySchema, auditResultSchema } from '../../lib/api/schemas/audit';
import type {
  batchListSchema,
  batchSummarySchema,
  createdBatchSchema,
  reclassifyResultSchema,
  uploadFormsSchema,
} from '../../lib/api/schemas/batches';
import type { usageSchema } from '../../lib/api/schemas/clients';
import type { errorSchema } from '../../lib/api/schemas/common';
import type { imageListSchema, imageSchema } from '../../lib/api/schemas/images';
import type { retryResultSchema } from '../../lib/api/schemas/imports';
import type { logListSchema } from '../../lib/api/schemas/logs';
import type { changeListSchema, redetectResultSchema } from '../../lib/api/schemas/redetect';
import type { agreementSchema } from '../../lib/api/schemas/reviews';
import type { similarGroupsSchema } from '../../lib/api/schemas/similar';

/** Compiles only when every value of `Server` is a value of `Client`. */
type ClientReads<Server extends Client, Client> = [Server, Client];

export type ServerAnswersFitTheClients = [
  ClientReads<z.output<typeof imageSchema>, Image>,
  ClientReads<z.output<typeof batchSummarySchema>, BatchSummary>,
  ClientReads<z.output<typeof imageListSchema>, Page<Image>>,
  ClientReads<z.output<typeof batchListSchema>, Page<BatchSummary>>,
  ClientReads<z.output<typeof logListSchema>, Page<LogEntry>>,
  ClientReads<z.output<typeof createdBatchSchema>, CreatedBatch>,
  ClientReads<z.output<typeof uploadFormsSchema>, MoreUploads>,
  ClientReads<z.output<typeof errorSchema>, ApiErrorBody>,
  ClientReads<z.output<typeof similarGroupsSchema>, SimilarGroups>,
  ClientReads<z.output<typeof usageSchema>, Usage>,
  ClientReads<z.output<typeof agreementSchema>, Agreement>,
  ClientReads<z.output<typeof reclassifyResultSchema>, Reclassified>,
  ClientReads<z.output<typeof redetectResultSchema>, Redetected>,
  ClientReads<z.output<typeof changeListSchema>, Page<VerdictChange>>,
  ClientReads<z.output<typeof accuracySchema>, Accuracy>,
  ClientReads<z.output<typeof auditResultSchema>, AuditResult>,
  ClientReads<z.output<typeof retryResultSchema>, RetriedImport>,
];
