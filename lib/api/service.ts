// The API's read operations (docs/design.md §3), free of HTTP: a client id and validated input in, response shapes
// out. Every batch is read under its client's own partition, so another client's batch of the same name is never
// seen: it answers exactly like a missing one. Creating, closing and adding uploads is batch-lifecycle.ts.

import { reportedStatus, type Batch as StoredBatch } from '../domain/batch';
import type { LabelCount, ModelCount } from '../domain/detection';
import type { Image } from '../domain/image';
import type { BatchSummary } from '../domain/summary';
import { burstOf, type ClientLimits, nextUtcDay, utcDay } from '../quota/limits';
import { agreementOf } from '../review/agreement';
import { type HashedImage, nearDuplicateGroupsAsync } from '../similar/groups';
import type { BatchImagesFilter } from '../store/batch/images';
import type { BatchPagesOptions } from '../store/batch/pages';
import type { ClientBatchesFilter, ClientImagesFilter } from '../store/client/images';
import type { DailyUsage } from '../store/client/limits';
import type { ReviewedVerdict } from '../store/review/queue';
import type { TimeRange } from '../store/table/expressions';
import type { Page, PageRequest } from '../store/table/query';
import { type AuditReader, batchAccuracy } from './audit';
import { type ChangesReader, changesPage } from './changes';
import { BatchNotFoundError, ImageNotFoundError } from './errors';
import { type ImageLinkSigner, NO_LINKS } from './image-links';
import { presentBatch, presentImage, presentLogEntry } from './present';
import type { AccuracyAnswer } from './schemas/audit';
import type { ClientBatchesQuery } from './schemas/batches';
import type { KnownFingerprints, Usage } from './schemas/clients';
import type { BatchImagesQuery, ClientImagesQuery } from './schemas/image-queries';
import type { ImageAnswer } from './schemas/images';
import type { LogEntry, LogsQuery } from './schemas/logs';
import type { ChangesQuery, VerdictChange } from './schemas/redetect';
import type { AgreementAnswer } from './schemas/reviews';
import type { SimilarGroups, SimilarQuery } from './schemas/similar';
/**
 * What the API reads of the store, and only that (lib/store/store-reads.ts StoreReads implements it; a test may hand a
 * fake): every read is of one client's batch or of the client's own listings.
 */
export interface ApiReads extends AuditReader, ChangesReader {
  batch(clientId: string, batchId: string): Promise<StoredBatch | undefined>;
  /** A page of the batch's images; undefined when the client cannot see the batch. */
  batchImages(clientId: string, batchId: string, filter: BatchImagesFilter, page: PageRequest): Promise<Page<Image> | undefined>;
  batchLogs(clientId: string, batchId: string, range: TimeRange, page: PageRequest): Promise<Page<Image>>;
  imagePages(clientId: string, batchId: string, opts: BatchPagesOptions): AsyncIterable<Image[]>;
  labelCounts(clientId: string, batchId: string, threshold: number): Promise<{ labels: LabelCount[]; models: ModelCount[] }>;
  image(clientId: string, batchId: string, fprint: string): Promise<Image | undefined>;
  images(clientId: string, batchId: string, fprints: string[]): Promise<Image[]>;
  reviewQueue(clientId: string, batchId: string, threshold: number, page: PageRequest): Promise<Page<Image>>;
  reviewedVerdicts(clientId: string, batchId: string): Promise<ReviewedVerdict[]>;
  auditQueue(clientId: string, batchId: string, page: PageRequest): Promise<Page<Image>>;
  clientBatches(clientId: string, filter: ClientBatchesFilter, page: PageRequest): Promise<Page<StoredBatch>>;
  clientImages(clientId: string, filter: ClientImagesFilter, page: PageRequest): Promise<Page<Image>>;
  knownFingerprints(clientId: string, fprints: readonly string[]): Promise<string[]>;
}

/** What GET /v1/usage reads: a client's limits and its usage of a day (lib/store/client/limits.ts). */
export interface UsageReader {
  limitsOf(clientId: string): Promise<ClientLimits>;
  usage(clientId: string, day: string): Promise<DailyUsage>;
}

interface ApiServiceOptions {
  store: ApiReads;
  /** Signs images' thumbnailUrl and imageUrl; without it both are null. */
  links?: ImageLinkSigner;
  /** Clients' limits and usage (GET /v1/usage). */
  limits?: UsageReader;
  now?: () => number;
  /** The configured cat threshold: a batch's own when it has none stored (made before batches kept it). */
  catMinConfidence: number;
  /** Dollars per DetectLabels call (ICECAT_PRICE_PER_IMAGE_USD): batch summaries, usage and estimates price at it. */
  pricePerImageUsd: number;
}

/**
 * How GET …/similar reads the batch: of each image only its key, its pHash and its name to show, 2,000 items a Query
 * (projected items are ~100 bytes, so a page stays far below DynamoDB's 1 MB). The similar bench reads the same way.
 */
export const SIMILAR_READ: BatchPagesOptions = { attributes: ['fprint', 'phash', 'fileName'], pageSize: 2000 };

interface List<T> {
  items: T[];
  cursor?: string;
}

const list = <T, U>(page: { items: T[]; cursor?: string }, present: (item: T) => U): List<U> => ({
  items: page.items.map(present),
  ...(page.cursor ? { cursor: page.cursor } : {}),
});

const cursorOf = (page: { cursor?: string }) => (page.cursor ? { cursor: page.cursor } : {});

export class ApiService {
  constructor(private readonly opts: ApiServiceOptions) {}

  /** GET …/changes: the images whose machine verdict a re-detection changed. */
  async changes(clientId: string, batchId: string, q: ChangesQuery): Promise<List<VerdictChange>> {
    return changesPage(this.opts.store, clientId, batchId, q);
  }

  async getBatch(clientId: string, batchId: string): Promise<BatchSummary> {
    const batch = await this.opts.store.batch(clientId, batchId);
    if (!batch) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    const counted = await this.labelsOf(batch);
    return presentBatch(batch, this.opts.pricePerImageUsd, counted?.labels ?? null, counted?.models ?? null);
  }

  /** A done batch's top labels and its models (a projected read of its partition); null while it still changes. */
  private async labelsOf(batch: StoredBatch): Promise<{ labels: LabelCount[]; models: ModelCount[] } | null> {
    if (reportedStatus(batch) !== 'done') return null;
    const threshold = batch.catMinConfidence ?? this.opts.catMinConfidence ?? 80;
    return this.opts.store.labelCounts(batch.clientId, batch.batchId, threshold);
  }

  /**
   * Throws BatchNotFoundError unless the client has this batch, it has not expired and is not being erased. Read every
   * time: a batch marked for erasure by another function must answer 404 at once, which no container cache can know.
   */
  private async requireBatch(clientId: string, batchId: string): Promise<void> {
    if (!(await this.opts.store.batch(clientId, batchId))) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
  }

  /** The client's limits and today's (UTC) use of its images quota. */
  async usage(clientId: string): Promise<Usage> {
    const reader = this.opts.limits;
    if (!reader) throw new Error('this API service has no limits reader');
    const now = (this.opts.now ?? Date.now)();
    const day = utcDay(now);
    const [limits, used] = await Promise.all([reader.limitsOf(clientId), reader.usage(clientId, day)]);
    return {
      clientId,
      day,
      limits: { requestsPerSecond: limits.ratePerSecond, burst: burstOf(limits.ratePerSecond), imagesPerDay: limits.maxImagesPerDay },
      images: { accepted: used.accepted, rejected: used.rejected, remaining: Math.max(0, limits.maxImagesPerDay - used.accepted) },
      resetsAt: new Date(nextUtcDay(now)).toISOString(),
      pricePerImageUsd: this.opts.pricePerImageUsd,
    };
  }

  async listBatches(clientId: string, query: ClientBatchesQuery): Promise<List<BatchSummary>> {
    const { limit, cursor, ...filter } = query;
    return list(await this.opts.store.clientBatches(clientId, filter, { limit, cursor }), (batch) =>
      presentBatch(batch, this.opts.pricePerImageUsd),
    );
  }

  async listBatchImages(clientId: string, batchId: string, query: BatchImagesQuery): Promise<List<ImageAnswer>> {
    const { limit, cursor, review, audit, order, ...rest } = query;
    // order=uncertain belongs to the review queue; order=captured reads by capture time (batch-captured).
    const filter = order === 'captured' ? { ...rest, order } : rest;
    if (audit === 'pending') {
      await this.requireBatch(clientId, batchId);
      const page = await this.opts.store.auditQueue(clientId, batchId, { limit, cursor });
      return { items: await this.presentImages(page.items), ...cursorOf(page) };
    }
    if (review === 'pending') {
      const batch = await this.opts.store.batch(clientId, batchId);
      if (!batch) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
      const page = await this.opts.store.reviewQueue(clientId, batchId, this.thresholdOf(batch), { limit, cursor });
      return { items: await this.presentImages(page.items), ...cursorOf(page) };
    }
    const page = await this.opts.store.batchImages(clientId, batchId, filter, { limit, cursor });
    if (!page) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    return { items: await this.presentImages(page.items), ...cursorOf(page) };
  }

  async getBatchImage(clientId: string, batchId: string, fprint: string): Promise<ImageAnswer> {
    await this.requireBatch(clientId, batchId);
    const image = await this.opts.store.image(clientId, batchId, fprint);
    if (!image) throw new ImageNotFoundError(`image ${fprint} not found in batch ${batchId}`, { batchId, fprint });
    return (await this.presentImages([image]))[0]!;
  }

  async batchGetImages(clientId: string, batchId: string, fprints: string[]): Promise<{ items: ImageAnswer[]; notFound: string[] }> {
    await this.requireBatch(clientId, batchId);
    const images = await this.opts.store.images(clientId, batchId, fprints);
    const found = new Set(images.map((i) => i.fprint));
    return { items: await this.presentImages(images), notFound: [...new Set(fprints)].filter((f) => !found.has(f)) };
  }

  async listBatchLogs(clientId: string, batchId: string, query: LogsQuery): Promise<List<LogEntry>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...range } = query;
    return list(await this.opts.store.batchLogs(clientId, batchId, range, { limit, cursor }), presentLogEntry);
  }

  /**
   * Near-duplicate groups over the batch's distinct images recorded so far (docs/similarity.md): every record with a
   * pHash, so those fingerprinted but still being classified too. Reads the batch's partition, projected, in pages.
   */
  async similarGroups(clientId: string, batchId: string, query: SimilarQuery): Promise<SimilarGroups> {
    await this.requireBatch(clientId, batchId);
    const images: HashedImage[] = [];
    const names = new Map<string, string | null>();
    for await (const page of this.opts.store.imagePages(clientId, batchId, SIMILAR_READ)) {
      for (const image of page) {
        if (!image.phash) continue;
        images.push({ fprint: image.fprint, phash: image.phash });
        names.set(image.fprint, image.fileName ?? null);
      }
    }
    // Grouped in slices, so that the server answers other requests meanwhile (the local stack's API shares its thread).
    const { groups } = await nearDuplicateGroupsAsync(images, query.maxDistance === undefined ? {} : { maxDistance: query.maxDistance });
    return { groups: groups.map((g) => ({ ...g, fileNames: g.fprints.map((f) => names.get(f) ?? null) })) };
  }

  /** Agreement of the machine with the batch's reviews, at the batch's threshold now (docs/design.md §10). */
  async agreement(clientId: string, batchId: string): Promise<AgreementAnswer> {
    const batch = await this.opts.store.batch(clientId, batchId);
    if (!batch) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    const verdicts = await this.opts.store.reviewedVerdicts(clientId, batchId);
    const agreement = agreementOf(
      verdicts.map((v) => ({ catConfidence: v.catConfidence, isCat: v.review.isCat, machineIsCat: v.review.machineIsCat })),
    );
    return { ...agreement, catMinConfidence: this.thresholdOf(batch) };
  }

  /** The machine's accuracy estimated from the batch's audit sample (docs/accuracy.md). */
  async accuracy(clientId: string, batchId: string): Promise<AccuracyAnswer> {
    await this.requireBatch(clientId, batchId);
    return batchAccuracy(this.opts.store, clientId, batchId);
  }

  private thresholdOf(batch: StoredBatch): number {
    return batch.catMinConfidence ?? this.opts.catMinConfidence;
  }

  async listClientImages(clientId: string, query: ClientImagesQuery): Promise<List<ImageAnswer>> {
    const { limit, cursor, ...filter } = query;
    const page = await this.opts.store.clientImages(clientId, filter, { limit, cursor });
    return { items: await this.presentImages(page.items), ...cursorOf(page) };
  }

  /** POST /v1/fingerprints:known: which of these pixels the client already has answers for (an upload estimate). */
  async knownFingerprints(clientId: string, fprints: string[]): Promise<KnownFingerprints> {
    return { known: await this.opts.store.knownFingerprints(clientId, fprints), pricePerImageUsd: this.opts.pricePerImageUsd };
  }

  private async presentImages(images: Image[]): Promise<ImageAnswer[]> {
    const { links } = this.opts;
    const signed = links ? await Promise.all(images.map((image) => links.linksOf(image))) : images.map(() => NO_LINKS);
    return images.map((image, i) => presentImage(image, signed[i]));
  }
}
