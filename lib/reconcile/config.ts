// The sweep's settings from the environment, read once per container; a bad value stops it at start.
import { envNumber, required } from '../config';
import type { SweepLimits } from './sweep';

export interface ReconcileConfig {
  bucketName: string;
  queueUrl: string;
  region: string;
  limits: SweepLimits;
  /** Completion callbacks whose message was lost are queued again here (lib/reconcile/callbacks.ts). */
  callbacks: { tableName: string; queueUrl: string; graceSeconds: number };
}

/** How long a callback may show no progress beyond its own retry waits before the sweep queues it again. */
export const callbackGraceSecondsFromEnv = (): number => envNumber('CALLBACK_REQUEUE_GRACE_SECONDS', 120, { min: 0, max: 86_400 });

/** The sweep's bounds (RECONCILE_GRACE_SECONDS, RECONCILE_MAX_OBJECTS, RECONCILE_MAX_SECONDS). */
export function sweepLimitsFromEnv(defaults: { graceSeconds: number; maxObjects: number; maxSeconds: number }): SweepLimits {
  return {
    graceMs: envNumber('RECONCILE_GRACE_SECONDS', defaults.graceSeconds, { min: 0, max: 14 * 86_400 }) * 1000,
    maxObjects: envNumber('RECONCILE_MAX_OBJECTS', defaults.maxObjects, { min: 1, max: 1_000_000, integer: true }),
    maxDurationMs: envNumber('RECONCILE_MAX_SECONDS', defaults.maxSeconds, { min: 1, max: 900 }) * 1000,
  };
}

export function loadReconcileConfig(): ReconcileConfig {
  return {
    bucketName: required('BUCKET_NAME'),
    queueUrl: required('INGEST_QUEUE_URL'),
    region: required('AWS_REGION'),
    limits: sweepLimitsFromEnv({ graceSeconds: 900, maxObjects: 5000, maxSeconds: 60 }),
    callbacks: { tableName: required('TABLE_NAME'), queueUrl: required('CALLBACK_QUEUE_URL'), graceSeconds: callbackGraceSecondsFromEnv() },
  };
}
