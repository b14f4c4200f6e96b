// The API's read operations (docs/design.md §3), free of HTTP: a client id and validated input in, response shapes
// out. Every batch is read under its client's own partition, so another client's batch of the same name is never
// seen: it answers exactly like a missing one. Creating, closing and adding uploads is batch-lifecycle.ts.
import { getBatch, getImage, getImages, queryBatchImages, queryBatchLogs, queryClientBatches, queryClientImages, type StoreContext } from '../store/reader';
import type { Image as StoredImage } from '../store/model';
import { BatchNotFoundError, ImageNotFoundError } from './errors';
import { NO_LINKS, type ImageLinkSigner } from './image-links';
import { presentBatch, presentImage, presentLogEntry } from './present';
import type { BatchImagesQuery, BatchSummary, ClientBatchesQuery, ClientImagesQuery, Image, LogEntry, LogsQuery } from './schemas';

export interface ApiServiceOptions {
  store: StoreContext;
  /** Signs images' thumbnailUrl and imageUrl; without it both are null. */
  links?: ImageLinkSigner;
}

export interface List<T> {
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

  async getBatch(clientId: string, batchId: string): Promise<BatchSummary> {
    const batch = await getBatch(this.opts.store, clientId, batchId);
    if (!batch) throw new BatchNotFoundError(batchId);
    return presentBatch(batch);
  }

  /**
   * Throws BatchNotFoundError unless the client has this batch, it has not expired and is not being erased. Read every
   * time: a batch marked for erasure by another function must answer 404 at once, which no container cache can know.
   */
  private async requireBatch(clientId: string, batchId: string): Promise<void> {
    await this.getBatch(clientId, batchId);
  }

  async listBatches(clientId: string, query: ClientBatchesQuery): Promise<List<BatchSummary>> {
    const { limit, cursor, ...filter } = query;
    return list(await queryClientBatches(this.opts.store, clientId, filter, { limit, cursor }), presentBatch);
  }

  async listBatchImages(clientId: string, batchId: string, query: BatchImagesQuery): Promise<List<Image>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...filter } = query;
    const page = await queryBatchImages(this.opts.store, clientId, batchId, filter, { limit, cursor });
    return { items: await this.presentImages(page.items), ...cursorOf(page) };
  }

  async getBatchImage(clientId: string, batchId: string, fprint: string): Promise<Image> {
    await this.requireBatch(clientId, batchId);
    const image = await getImage(this.opts.store, clientId, batchId, fprint);
    if (!image) throw new ImageNotFoundError(batchId, fprint);
    return (await this.presentImages([image]))[0]!;
  }

  async batchGetImages(clientId: string, batchId: string, fprints: string[]): Promise<{ items: Image[]; notFound: string[] }> {
    await this.requireBatch(clientId, batchId);
    const images = await getImages(this.opts.store, clientId, batchId, fprints);
    const found = new Set(images.map((i) => i.fprint));
    return { items: await this.presentImages(images), notFound: [...new Set(fprints)].filter((f) => !found.has(f)) };
  }

  async listBatchLogs(clientId: string, batchId: string, query: LogsQuery): Promise<List<LogEntry>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...range } = query;
    return list(await queryBatchLogs(this.opts.store, clientId, batchId, range, { limit, cursor }), presentLogEntry);
  }

  async listClientImages(clientId: string, query: ClientImagesQuery): Promise<List<Image>> {
    const { limit, cursor, ...filter } = query;
    const page = await queryClientImages(this.opts.store, clientId, filter, { limit, cursor });
    return { items: await this.presentImages(page.items), ...cursorOf(page) };
  }

  private async presentImages(images: StoredImage[]): Promise<Image[]> {
    const { links } = this.opts;
    const signed = links ? await Promise.all(images.map((image) => links.linksOf(image))) : images.map(() => NO_LINKS);
    return images.map((image, i) => presentImage(image, signed[i]));
  }
}
