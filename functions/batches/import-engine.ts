// The batches function's import engine on AWS (docs/decisions/0042): an import batch's fan-out is an S3 Batch
// Operations job, created by ImportEngine.start once its source passed the client's allowed sources. Built lazily: its
// clients and settings (functions/config.ts loadBatchOperationsSettings) only when the first import starts, so a
// batches container that never imports reads none of them. The local stack passes its own lister instead. The
// reconcile sweep builds it too, to follow each job to its end (lib/reconcile/import-jobs.ts).
import { createS3Client, createS3ControlClient } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import { type ImportEngine, S3BatchOperationsEngine } from '../../lib/import/batch-operations';
import { loadBatchOperationsSettings } from '../config';

export function awsImportEngine(): ImportEngine {
  let engine: S3BatchOperationsEngine | undefined;
  const built = () =>
    (engine ??= new S3BatchOperationsEngine({
      s3control: createS3ControlClient(),
      s3: createS3Client(loadAwsClientSettings()),
      settings: loadBatchOperationsSettings(),
    }));
  return {
    check: (source) => built().check(source),
    start: (job) => built().start(job),
    describe: (jobId) => built().describe(jobId),
  };
}
