// The reconciliation sweep (docs/design.md, "Nothing lost"): an object still under uploads/ long after it arrived
// was never handled — its notification was lost, the process died between two steps, or its message went to the
// dead letters for a cause since gone. The sweep lists uploads/ page by page and queues each such object again with
// the very S3 event message its notification would have carried; the ingest treats a second delivery of an upload
// as a redelivery, so queueing one too many is harmless. Work per run is bounded in objects and in time.
import { ListObjectsV2Command, type ListObjectsV2CommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { batchesOfKeys, UPLOAD_PREFIX } from '../ingest/s3-key';
import { s3EventMessage, s3EventRecord } from './s3-event';

export interface SweepLimits {
  /** Objects younger than this are left alone: their notification may still be on its way or in the queue. */
  graceMs: number;
  /** Most objects queued again per run; the rest wait for the next run. */
  maxObjects: number;
  /** No new page is listed once a run has taken this long. */
  maxDurationMs: number;
  /** ListObjectsV2 MaxKeys (S3 answers at most 1,000). */
  pageSize?: number;
}

export interface SweepDeps {
  s3: Pick<S3Client, 'send'>;
  bucket: string;
  region: string;
  /** Sends the messages (one S3 event each) to the ingest queue; resolves once all are accepted. */
  sendMessages(bodies: string[]): Promise<void>;
  /** An object whose message is still in the queue (known locally, not on AWS): not queued twice. */
  isQueued?(key: string): boolean;
  /**
   * Called once per batch that had an object queued again, after sending: the batch's counters may have missed an
   * update (a crash between a record's write and its count), so the caller has them recounted.
   */
  onStaleBatch?(clientId: string, batchId: string): Promise<void> | void;
  now?: () => number;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

export interface SweepResult {
  /** Objects listed under uploads/. */
  listed: number;
  /** ListObjectsV2 requests sent. */
  listRequests: number;
  /** Objects older than the grace period. */
  stale: number;
  /** Stale objects left alone because their message is still queued. */
  alreadyQueued: number;
  /** Objects queued again (their keys, decoded). */
  queued: string[];
  /** Batches whose objects were queued again, as `clientId/batchId`. */
  staleBatches: string[];
  /** True when a limit ended the run before the listing did. */
  truncated: boolean;
  durationMs: number;
}

/** One run of the sweep over uploads/. */
export async function sweepUploads(deps: SweepDeps, limits: SweepLimits): Promise<SweepResult> {
  const now = deps.now ?? Date.now;
  const started = now();
  const cutoff = started - limits.graceMs;
  const result: SweepResult = {
    listed: 0,
    listRequests: 0,
    stale: 0,
    alreadyQueued: 0,
    queued: [],
    staleBatches: [],
    truncated: false,
    durationMs: 0,
  };
  let token: string | undefined;
  do {
    if (result.listRequests > 0 && now() - started >= limits.maxDurationMs) {
      result.truncated = true;
      break;
    }
    const page: ListObjectsV2CommandOutput = await deps.s3.send(
      new ListObjectsV2Command({
        Bucket: deps.bucket,
        Prefix: UPLOAD_PREFIX,
        MaxKeys: limits.pageSize ?? 1000,
        ContinuationToken: token,
      }),
    );
    result.listRequests += 1;
    const bodies: string[] = [];
    for (const object of page.Contents ?? []) {
      result.listed += 1;
      if (!object.Key || !object.LastModified || object.LastModified.getTime() > cutoff) continue;
      result.stale += 1;
      if (deps.isQueued?.(object.Key)) {
        result.alreadyQueued += 1;
        continue;
      }
      if (result.queued.length + bodies.length >= limits.maxObjects) {
        result.truncated = true;
        break;
      }
      bodies.push(staleUploadMessage(deps, object.Key, object.Size ?? 0, object.ETag, object.LastModified));
      result.queued.push(object.Key);
    }
    if (bodies.length > 0) await deps.sendMessages(bodies);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token && !result.truncated);

  const batches = batchesOfKeys(result.queued);
  result.staleBatches = batches.map(({ clientId, batchId }) => `${clientId}/${batchId}`);
  for (const { clientId, batchId } of batches) {
    try {
      await deps.onStaleBatch?.(clientId, batchId);
    } catch (err) {
      deps.log?.('recounting a stale batch failed; the next sweep tries again', { clientId, batchId, error: String(err) });
    }
  }
  result.durationMs = now() - started;
  if (result.queued.length > 0 || result.truncated) {
    deps.log?.('queued stale uploads again', {
      queued: result.queued.length,
      stale: result.stale,
      listed: result.listed,
      truncated: result.truncated,
      batches: result.staleBatches,
    });
  }
  return result;
}

/** The S3 → SQS notification message this object's upload would have sent. */
function staleUploadMessage(
  deps: Pick<SweepDeps, 'bucket' | 'region'>,
  key: string,
  size: number,
  eTag: string | undefined,
  lastModified: Date,
): string {
  return s3EventMessage(
    s3EventRecord(
      { operation: 'Put', bucket: deps.bucket, key, size, eTag: eTag?.replace(/"/g, ''), sourceIp: '127.0.0.1', time: lastModified },
      { region: deps.region, configurationId: 'icecat-reconcile' },
    ),
  );
}
