// The sweep's settings from the environment, read once per container; a bad value stops it at start.
import { envNumber, required } from '../config';
import type { SweepLimits } from './sweep';

export interface ReconcileConfig {
  bucketName: string;
  queueUrl: string;
  region: string;
  limits: SweepLimits;
}

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
  };
}
