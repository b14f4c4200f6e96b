// The local stack's sweeps (stack.ts starts them last): the reconciliation sweep, the reconcile function's work, and
// the expiry sweep, the expire function's, each signing and sending as its function.
import { type LocalReconciler, startLocalReconciler } from '../bridge/reconcile';
import type { LocalFunctionSettings } from '../config';
import { LOCAL_NAMES } from '../contract';
import type { LocalQueue } from '../queue/queue';
import { loadBucketLifecycleRules } from '../s3/lifecycle';
import { type LocalExpiry, startLocalExpiry } from './expiry';
import { documentClientAs, queueAs, s3ClientAs, sendCheckAs } from './iam';
import type { LocalJobQueues } from './job-queues';
import type { Starting, Stores } from './parts';
import { callbackSweep, countChecker, ROOT, redetectSweep } from './services';
import type { StackOptions } from './types';

/** The reconciliation sweep (with the count check and the callbacks' look where it can run them); none when turned off. */
export function startReconciler(
  { opts, quiet, log, started, iam, config }: Starting,
  { s3, dynamodb }: Stores,
  bridge: LocalQueue,
  jobs: LocalJobQueues,
  onStaleBatch: NonNullable<StackOptions['onStaleBatch']>,
  fn: LocalFunctionSettings,
): LocalReconciler | undefined {
  if (opts.reconcile === false) return undefined;
  const graceMs = opts.reconcile?.graceMs ?? config.reconcile.graceMs;
  // The sweep of uploads/ and the callbacks' look are the reconcile function's on AWS: they sign and send as it.
  const reconciler = startLocalReconciler({
    s3: s3ClientAs('reconcile', s3.url),
    checkSend: sendCheckAs(iam, 'reconcile', 'uploads'),
    bucket: s3.bucket,
    region: LOCAL_NAMES.region,
    queue: bridge,
    ...opts.reconcile,
    intervalMs: opts.reconcile?.intervalMs ?? config.reconcile.intervalMs,
    graceMs,
    onStaleBatch,
    // It reads the batches-expiring index, which a table made before it lacks (the expiry sweep says so).
    ...(dynamodb.table.missingIndexes.includes('batches-expiring')
      ? {}
      : {
          checkCounts: countChecker(
            dynamodb.url,
            dynamodb.table.name,
            opts.applyEnv !== false ? jobs.callbacks : undefined,
            started,
            log,
            fn.pricePerImageUsd,
          ),
          redetections: redetectSweep(
            dynamodb.url,
            dynamodb.table.name,
            bridge,
            opts.applyEnv !== false ? jobs.callbacks : undefined,
            started,
            log,
            { ...fn, graceMs: config.reconcile.graceMs, runsIndexed: !dynamodb.table.missingIndexes.includes('redetect-runs') },
          ),
        }),
    ...(opts.applyEnv !== false
      ? { callbacks: callbackSweep(dynamodb.url, dynamodb.table.name, queueAs(iam, 'reconcile', 'callbacks', jobs.callbacks), started, fn) }
      : {}),
    log: quiet ? () => undefined : (line) => console.warn(line),
  });
  started.push({ name: 'reconcile', close: () => reconciler.stop() });
  return reconciler;
}

/** The expiry sweep, where the environment is applied and the table has the index it reads. */
export async function startExpiry(
  { opts, quiet, log, started, iam, config }: Starting,
  { s3, s3Client, dynamodb }: Stores,
  bridge: LocalQueue,
  jobs: LocalJobQueues,
): Promise<LocalExpiry | undefined> {
  if (opts.expiry === false || opts.applyEnv === false) return undefined;
  if (dynamodb.table.missingIndexes.includes('batches-expiring')) {
    log('[expiry] no expiry sweep: the table predates the batches-expiring index, so expired batches are hidden but not erased');
    return undefined;
  }
  // The expire function's work: it reads and marks as itself, and queues erasures as itself.
  const expiry = startLocalExpiry({
    ddb: documentClientAs('expire', dynamodb.url, started),
    tableName: dynamodb.table.name,
    erasures: queueAs(iam, 'expire', 'erase', jobs.erasures),
    // The local S3 has no lifecycle: the deployed bucket's rules, applied as S3 would.
    lifecycle: { s3: s3Client, bucket: s3.bucket, rules: await loadBucketLifecycleRules(ROOT), keep: (key) => bridge.hasMessageFor(key) },
    ...opts.expiry,
    intervalMs: (opts.expiry ? opts.expiry.intervalMs : undefined) ?? config.expiryIntervalMs,
    log: quiet ? () => undefined : (line) => console.warn(line),
  });
  started.push({ name: 'expiry', close: () => expiry.stop() });
  return expiry;
}
