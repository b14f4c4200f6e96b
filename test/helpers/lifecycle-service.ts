// The batch lifecycle as the fake-store tests build it: on a fake of its store (LifecycleStore), S3 a client with test
// credentials used only to sign offline (no request is sent), a clock at `now`, the configured cat threshold 80.
import { S3Client } from '@aws-sdk/client-s3';
import { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import type { BatchLifecycleOptions } from '../../lib/api/batch-lifecycle-deps';

export const OFFLINE_S3 = { region: 'us-east-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' } };

/** The service on `store` at `now`, with what a test adds (its erasures queue, its exports). */
export function lifecycleServiceOn(
  store: BatchLifecycleOptions['store'],
  now: number,
  extra: Partial<BatchLifecycleOptions> = {},
): BatchLifecycleService {
  return new BatchLifecycleService({
    store,
    s3: new S3Client(OFFLINE_S3),
    bucketName: 'bucket',
    defaultRetentionDays: 30,
    catMinConfidence: 80,
    maxUploadBytes: 10_000_000,
    uploadExpiresSeconds: 900,
    pricePerImageUsd: 0.001,
    now: () => now,
    ...extra,
  });
}
