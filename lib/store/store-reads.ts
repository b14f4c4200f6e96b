// The store's reads, in domain terms, as one object the API is handed (lib/api/service.ts ApiReads declares what it
// asks): a batch's summary, its listings, queues and logs, its images by key or page, its label counts, reviews, audit
// sample and re-detection changes, and a client's listings. Each method hands its call to the entity's own read
// (batch/, image/, client/, review/, audit/, redetect/), where its request is built; the facade adds nothing.
import type { Batch } from '../domain/batch';
import type { LabelCount, ModelCount } from '../domain/detection';
import type { Image } from '../domain/image';
import {
  type AuditedEntry,
  answersAfterRedetect,
  auditCandidates,
  auditEntries,
  queryAuditQueue,
  type StrataSizes,
  strataSizes,
} from './audit/queue';
import { type BatchImagesFilter, queryBatchLogs, queryVisibleBatchImages } from './batch/images';
import { batchLabelCounts } from './batch/label-counts';
import { type BatchPagesOptions, batchImagePages } from './batch/pages';
import { getBatch } from './batch/read';
import { type ClientBatchesFilter, type ClientImagesFilter, queryClientBatches, queryClientImages } from './client/images';
import { knownFingerprints } from './image/known';
import { getImage, getImages } from './image/reads';
import { queryChangedImages } from './redetect/changes';
import { queryReviewQueue, type ReviewedVerdict, reviewedVerdicts } from './review/queue';
import type { TimeRange } from './table/expressions';
import type { Page, PageRequest, StoreContext } from './table/query';

export class StoreReads {
  constructor(private readonly ctx: StoreContext) {}

  /** The batch's summary; undefined when missing, expired or being erased. */
  batch(clientId: string, batchId: string): Promise<Batch | undefined> {
    return getBatch(this.ctx, clientId, batchId);
  }

  /** A page of the batch's images as the listing filters them; undefined when the client cannot see the batch. */
  batchImages(clientId: string, batchId: string, filter: BatchImagesFilter, page: PageRequest): Promise<Page<Image> | undefined> {
    return queryVisibleBatchImages(this.ctx, clientId, batchId, filter, page);
  }

  /** A page of the batch's debug logs. */
  batchLogs(clientId: string, batchId: string, range: TimeRange, page: PageRequest): Promise<Page<Image>> {
    return queryBatchLogs(this.ctx, clientId, batchId, range, page);
  }

  /** The batch's images, a projected page at a time, to the end. */
  imagePages(clientId: string, batchId: string, opts: BatchPagesOptions): AsyncIterable<Image[]> {
    return batchImagePages(this.ctx, clientId, batchId, opts);
  }

  /** A done batch's top labels and its models, counted at the threshold. */
  labelCounts(clientId: string, batchId: string, threshold: number): Promise<{ labels: LabelCount[]; models: ModelCount[] }> {
    return batchLabelCounts(this.ctx, clientId, batchId, threshold);
  }

  image(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    return getImage(this.ctx, clientId, batchId, fprint);
  }

  images(clientId: string, batchId: string, fprints: string[]): Promise<Image[]> {
    return getImages(this.ctx, clientId, batchId, fprints);
  }

  /** The batch's images a person should review first, at the threshold. */
  reviewQueue(clientId: string, batchId: string, threshold: number, page: PageRequest): Promise<Page<Image>> {
    return queryReviewQueue(this.ctx, clientId, batchId, threshold, page);
  }

  reviewedVerdicts(clientId: string, batchId: string): Promise<ReviewedVerdict[]> {
    return reviewedVerdicts(this.ctx, clientId, batchId);
  }

  /** The audit sample's images still to review. */
  auditQueue(clientId: string, batchId: string, page: PageRequest): Promise<Page<Image>> {
    return queryAuditQueue(this.ctx, clientId, batchId, page);
  }

  /** The strata's sizes at the batch's last draw; undefined before any. */
  strataSizes(clientId: string, batchId: string): Promise<StrataSizes | undefined> {
    return strataSizes(this.ctx, clientId, batchId);
  }

  auditEntries(clientId: string, batchId: string): Promise<AuditedEntry[]> {
    return auditEntries(this.ctx, clientId, batchId);
  }

  /** The batch's classified images as a draw sees them. */
  auditCandidates(clientId: string, batchId: string): Promise<Image[]> {
    return auditCandidates(this.ctx, clientId, batchId);
  }

  /** The audited images' records when a re-detection left another model's answer on some; undefined when none did. */
  answersAfterRedetect(clientId: string, batchId: string, audited: readonly string[]): Promise<Image[] | undefined> {
    return answersAfterRedetect(this.ctx, clientId, batchId, audited);
  }

  /** A page of the batch's images whose machine verdict a re-detection changed. */
  changedImages(clientId: string, batchId: string, page: PageRequest): Promise<Page<Image>> {
    return queryChangedImages(this.ctx, clientId, batchId, page);
  }

  clientBatches(clientId: string, filter: ClientBatchesFilter, page: PageRequest): Promise<Page<Batch>> {
    return queryClientBatches(this.ctx, clientId, filter, page);
  }

  clientImages(clientId: string, filter: ClientImagesFilter, page: PageRequest): Promise<Page<Image>> {
    return queryClientImages(this.ctx, clientId, filter, page);
  }

  /** Which of these fingerprints the client has answers for from the model answering now. */
  knownFingerprints(clientId: string, fprints: readonly string[]): Promise<string[]> {
    return knownFingerprints(this.ctx, clientId, fprints);
  }
}
