// The local engine of imports (docs/design.md §16): the lister (lib/import/lister.ts) as the consumer of an in-process
// job queue, one job per batch listing. POST /v1/batches with a source queues the first; a listing waiting for the
// quota queues itself again for the reset; a fault tries again in 5 s; and at start every import still running
// (partition IMPORT#LIVE#, a Query) is queued again, so a kill -9 resumes from the batch's checkpoint. On AWS the
// fan-out is an engine's (S3 Batch Operations or a distributed map), whose task calls enqueueSourceObject as this does.
import type { SQSEvent } from 'aws-lambda';
import { clients } from '../../lib/aws/clients';
import type { IngestConfig } from '../../lib/config';
import type { ImportQueue } from '../../lib/import/enqueue';
import { type ListerDeps, listImport } from '../../lib/import/lister';
import { encodeListJob, listJobIn } from '../../lib/import/message';
import type { LocalJobQueue } from '../../lib/jobs/queue';
import { BatchStore } from '../../lib/store/batch-store';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { ImportStore } from '../../lib/store/imports/imports';
import { ImportMarksStore } from '../../lib/store/imports/marks';
import type { LocalFunctionSettings } from '../config';

/** The uploads queue as an import sends to it: the bridge's durable queue, each message in its client's group. */
export const importUploadsQueue = (bridge: { send(body: string, options?: { groupId?: string }): string }): ImportQueue => ({
  send: async (body, groupId) => void bridge.send(body, { groupId }),
});

const RETRY_SECONDS = 5;

export interface ImportLister {
  /** Queues again every import still running (at start). */
  resume(): Promise<number>;
}

/** Sets the lister on `jobs` (built once the stack's environment is applied: it reads TABLE_NAME and the rest). */
export function startImportLister(
  jobs: LocalJobQueue,
  uploads: ImportQueue,
  opts: { log: (line: string) => void; onPage?: ListerDeps['onPage'] },
  settings: LocalFunctionSettings & { ingest: IngestConfig },
): ImportLister {
  const config = settings.ingest;
  const { s3, ddb } = clients(settings.aws);
  const { tableName, transactions } = config;
  const imports = new ImportStore({ ddb, tableName });
  const store = new BatchStore({ ddb, tableName, transactions });
  const sources = new ClientSourcesStore({ ddb, tableName });
  const deps: ListerDeps = {
    s3,
    imports,
    enqueue: {
      queue: uploads,
      marks: new ImportMarksStore({ ddb, tableName }),
      quota: new ClientQuotaStore({ ddb, tableName, ...settings.clientLimits, transactions }),
    },
    close: async (clientId, batchId, expected) => void (await store.close(clientId, batchId, expected)),
    sourcesOf: (clientId) => sources.sourcesOf(clientId),
    ...(opts.onPage ? { onPage: opts.onPage } : {}),
  };
  jobs.consumeWith(async (event: SQSEvent) => {
    for (const record of event.Records) {
      const job = listJobIn(record.body);
      if (!job) continue;
      try {
        const outcome = await listImport(deps, job.clientId, job.batchId);
        if (outcome.state === 'waiting-for-quota') {
          opts.log(`[imports] ${job.clientId}/${job.batchId} waits for the quota until ${new Date(outcome.resumesAt).toISOString()}`);
          await jobs.send(record.body, Math.max(1, (outcome.resumesAt - Date.now()) / 1000));
        }
      } catch (err) {
        opts.log(`[imports] listing ${job.clientId}/${job.batchId} failed, again in ${RETRY_SECONDS} s: ${String(err)}`);
        await jobs.send(record.body, RETRY_SECONDS);
      }
    }
  });
  return {
    resume: async () => {
      const live = await imports.liveImports();
      for (const { clientId, batchId } of live) await jobs.send(encodeListJob(clientId, batchId));
      return live.length;
    },
  };
}
