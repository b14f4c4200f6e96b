// Run in a child process by test/unit/tracing.test.ts, with the environment Lambda gives a traced function: a traced
// handler working on two uploads at once, each an S3 call (to a port that answers nothing), then its result as JSON.
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../../lib/aws/clients';
import { startTracing, tracedHandler, traceWork, tracingEnabled } from '../../lib/aws/tracing';
import { loadAwsClientSettings, loadTracingSettings } from '../../lib/config';

// As a function's handler starts: the tracer first, from the environment Lambda gives it, then its clients.
startTracing(loadTracingSettings());
const s3 = createS3Client(loadAwsClientSettings());
const handler = tracedHandler(async (batches: string[]) => {
  await Promise.all(
    batches.map((batchId) =>
      traceWork('upload', { clientId: 'c1', batchId }, () =>
        s3.send(new HeadObjectCommand({ Bucket: 'images', Key: `uploads/c1/${batchId}/a.png` })).catch(() => 'unreachable'),
      ),
    ),
  );
  return 'done';
});

handler(['b1', 'b2']).then((result) => {
  process.stdout.write(
    JSON.stringify({
      result,
      tracing: tracingEnabled(),
      xraySdkLoaded: Object.keys(require.cache).some((m) => m.includes('aws-xray-sdk-core')),
    }),
  );
});
