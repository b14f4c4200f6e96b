// The `importTask` function built from what it is given: the uploads queue (SQS on AWS, handler.ts; the local stack's
// queue in tests). Its table and quota defaults it reads from the environment once, when built: a missing TABLE_NAME
// fails there, naming the variable.
import { createDocumentClient } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { answerInvocation, type BatchOperationsResponse } from '../../lib/import/batch-operations-task';
import type { ImportQueue } from '../../lib/import/enqueue';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ImportJobsStore } from '../../lib/store/imports/jobs';
import { ImportMarksStore } from '../../lib/store/imports/marks';
import { clientLimitsCacheMs, defaultClientLimits } from '../config';

export interface ImportTaskWiring {
  /** The uploads queue the ingest reads (functions/ingest). */
  queue: ImportQueue;
  now?: () => number;
}

export type ImportTaskHandler = (event: unknown) => Promise<BatchOperationsResponse>;

export function createImportTaskHandler(wiring: ImportTaskWiring): ImportTaskHandler {
  const config = loadConfig();
  const ddb = createDocumentClient();
  const quota = new ClientQuotaStore({
    ddb,
    tableName: config.tableName,
    defaults: defaultClientLimits(),
    cacheMs: clientLimitsCacheMs(),
    transactions: config.transactions,
  });
  const marks = new ImportMarksStore({ ddb, tableName: config.tableName });
  // The import's progress on its batch summary, each object counted once (lib/store/imports/jobs.ts).
  const progress = new ImportJobsStore({ ddb, tableName: config.tableName, transactions: config.transactions });
  const deps = { queue: wiring.queue, marks, quota, progress, ...(wiring.now ? { now: wiring.now } : {}) };
  return (event) => answerInvocation(deps, event);
}
