// An import's API (docs/design.md §16), free of HTTP: the source checked against the client's allowed ones before
// anything is listed (403), the listing started, the completion report in S3 Batch Operations' columns (streamed like
// the exports: inline, or a 303 to S3 once large), and :retry, which sends again exactly the failed imported images.

import type { Batch } from '../domain/batch';
import type { Image, SourceObject } from '../domain/image';
import type { ImportProgress, ImportSource } from '../domain/import';
import type { BatchSummary } from '../domain/summary';
import { IceCatError, type IceCatErrorOptions } from '../errors';
import type { ImportEngine } from '../import/batch-operations';
import { type EnqueueDeps, enqueueSourceObject } from '../import/enqueue';
import { encodeListJob } from '../import/message';
import { isAllowed, jobAllow, sourceRoot } from '../import/sources';
import type { JobQueue } from '../jobs/queue';
import { retriesBeyondQuota, utcDay } from '../quota/limits';
import { BatchNotDoneError, BatchNotFoundError } from './errors';
import { presentBatch } from './present';

/** A source outside the client's allowed ones (npm run client:sources). */
export class SourceNotAllowedError extends IceCatError {
  override name = 'SourceNotAllowedError';
  readonly code = 'source_not_allowed';
  readonly source: string;
  constructor(message: string, options: IceCatErrorOptions & { source: string }) {
    super(message, options);
    this.source = options.source;
  }
}

/** An import asked of a deployment whose engine is not wired (no listing queue). */
export class ImportsNotConfiguredError extends IceCatError {
  override name = 'ImportsNotConfiguredError';
  readonly code = 'imports_not_configured';
}

/**
 * What an import's API asks of the store about the import, and only that (lib/store/imports/imports.ts ImportStore
 * implements it; a test may hand a fake): the running mark, the batch with its progress, the objects sent and the
 * records they ended as (the report), and the failed imported images :retry puts back.
 */
export interface ImportApiStore {
  /** Notes a running import, before its batch is made. */
  markLive(clientId: string, batchId: string): Promise<void>;
  /** The batch with its import's progress; undefined when it is gone or was never an import. */
  read(clientId: string, batchId: string): Promise<{ batch: Batch; checkpoint: ImportProgress } | undefined>;
  /** The objects the import sent, a page at a time; `fprint` finds the record each ended as. */
  sentObjects(
    clientId: string,
    batchId: string,
    start?: Record<string, unknown>,
  ): Promise<{ items: { source: SourceObject; fprint?: string }[]; next?: Record<string, unknown> }>;
  /** Records of the batch by fingerprint. */
  records(clientId: string, batchId: string, fprints: readonly string[]): Promise<Map<string, Image>>;
  /** The batch's failed imported images. */
  failedImports(clientId: string, batchId: string): Promise<(Image & { source: SourceObject })[]>;
  /** A failed imported image put back to be sent again; false when it was not a failed import any more. */
  putBack(clientId: string, batchId: string, image: Image & { source: SourceObject }): Promise<boolean>;
}

export interface ImportApiDeps {
  sources: { sourcesOf(clientId: string): Promise<readonly string[]> };
  imports: ImportApiStore;
  /** Locally: where a new import's listing is started (the lister's job queue, local/stack/import-lister.ts). */
  listings?: JobQueue;
  /**
   * On AWS, with no `listings`: the engine whose job lists the source (an S3 Batch Operations job, docs/decisions/0042
   * and 0043), and where the job's id is recorded on the import (lib/store/imports/jobs.ts).
   */
  engine?: Pick<ImportEngine, 'check' | 'start'> & {
    recordJob(clientId: string, batchId: string, job: { jobId: string; attempt: number }): Promise<void>;
  };
  /** :retry sends through the same once-only enqueue as the listing. */
  enqueue: EnqueueDeps;
  /** Today's images used (GET /v1/usage's `accepted`): :retry asks no more than are left. */
  usage(clientId: string, day: string): Promise<{ accepted: number }>;
  now?: () => number;
}

const describe = (s: ImportSource): string => ('manifest' in s ? s.manifest : `s3://${s.bucket}/${s.prefix}`);

/** 403 unless the source (the prefix, or the manifest object) lies inside one of the client's allowed sources. */
export async function checkSource(deps: ImportApiDeps | undefined, clientId: string, source: ImportSource): Promise<ImportApiDeps> {
  const root = sourceRoot(source);
  if (!deps || (!deps.listings && !deps.engine)) throw new ImportsNotConfiguredError('imports are not configured on this deployment');
  if (!isAllowed(await deps.sources.sourcesOf(clientId), root.bucket, root.key))
    throw new SourceNotAllowedError(`${describe(source)} is not among the sources you may import from; ask the operator to allow it`, {
      source: describe(source),
    });
  // On AWS a manifest is read before the batch is made (its ETag and columns, which CreateJob needs): 400 if unreadable.
  if (!deps.listings) await deps.engine?.check(source);
  return deps;
}

export const newImport = (source: ImportSource) => ({ source, state: 'listing' as const, listed: 0, enqueued: 0, skipped: 0 });

export interface RetryResult {
  batchId: string;
  /** The failed imported images sent again. */
  resubmitted: number;
  batch: BatchSummary;
}

/** :retry: the failed imported images sent again (each counted against today's quota); the batch processing again. */
export async function retryFailed(
  deps: ImportApiDeps | undefined,
  clientId: string,
  batchId: string,
  pricePerImageUsd: number,
): Promise<RetryResult> {
  const found = deps ? await deps.imports.read(clientId, batchId) : undefined;
  if (!deps || !found || found.batch.deleting) throw new BatchNotFoundError(`batch ${batchId} not found (or not an import)`, { batchId });
  if (found.checkpoint.state !== 'listed')
    throw new BatchNotDoneError(`batch ${batchId} is still listing its source; retry once it is listed`, { batchId });
  const target = { clientId, batchId, expiresAt: found.batch.expiresAt };
  const failed = await deps.imports.failedImports(clientId, batchId);
  // Put back only what today's quota can send: a record is deleted only to be sent again at once.
  const nowMs = (deps.now ?? Date.now)();
  const [limits, used] = await Promise.all([deps.enqueue.quota.limitsOf(clientId), deps.usage(clientId, utcDay(nowMs))]);
  if (failed.length > limits.maxImagesPerDay - used.accepted) throw retriesBeyondQuota(limits, failed.length, nowMs);
  let resubmitted = 0;
  for (const image of failed) {
    if (!(await deps.imports.putBack(clientId, batchId, image))) continue;
    // Changed since listed: sent again as the object is now (no ETag or version to hold it to).
    const { etag: _etag, versionId: _version, ...current } = image.source;
    const source: SourceObject = image.errorCode === 'SourceChanged' ? current : image.source;
    if ((await enqueueSourceObject(deps.enqueue, target, source)) !== 'over-quota') resubmitted += 1;
  }
  const after = await deps.imports.read(clientId, batchId);
  return { batchId, resubmitted, batch: presentBatch(after?.batch ?? found.batch, pricePerImageUsd) };
}

/**
 * Starts the listing of a batch just made from a source: locally the lister's job; on AWS the engine's first job,
 * whose id is recorded on the import (the reconcile sweep follows it to its end, lib/reconcile/import-jobs.ts).
 */
export async function startListing(
  deps: ImportApiDeps,
  batch: Pick<Batch, 'clientId' | 'batchId' | 'expiresAt' | 'import'>,
): Promise<void> {
  const { clientId, batchId, expiresAt } = batch;
  if (deps.listings) return deps.listings.send(encodeListJob(clientId, batchId));
  const source = batch.import?.source;
  if (!deps.engine || !source) throw new ImportsNotConfiguredError('imports are not configured on this deployment');
  const job = { clientId, batchId, expiresAt, source, allow: await jobAllow(deps.sources, clientId, source), attempt: 1 };
  const { jobId } = await deps.engine.start(job);
  await deps.engine.recordJob(clientId, batchId, { jobId, attempt: 1 });
}
