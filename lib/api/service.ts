// The API's read operations (docs/design.md §3), free of HTTP: a client id and validated input in, response shapes
// out. Every batch is read under its client's own partition, so another client's batch of the same name is never
// seen: it answers exactly like a missing one. Creating, closing and adding uploads is batch-lifecycle.ts.
import { getBatch, getImage, getImages, queryBatchImages, queryBatchLogs, queryClientBatches, queryClientImages, type StoreContext } from '../store/reader';
import { batchPartition, nowSeconds } from '../store/schema';
import { BatchNotFoundError, ImageNotFoundError } from './errors';
import { presentBatch, presentImage, presentLogEntry } from './present';
import type { BatchImagesQuery, BatchSummary, ClientBatchesQuery, ClientImagesQuery, Image, LogEntry, LogsQuery } from './schemas';

export interface ApiServiceOptions {
  store: StoreContext;
}

export interface List<T> {
  items: T[];
  cursor?: string;
}

/** Batches exist until they expire: a container remembers the ones it has seen (bounded), so most reads cost one request. */
class KnownBatches {
  private readonly expiries = new Map<string, number>();
  constructor(private readonly max = 10_000) {}
  has(partition: string, nowS: number): boolean {
    return (this.expiries.get(partition) ?? 0) > nowS;
  }
  add(partition: string, expiresAt: number): void {
    if (this.expiries.size >= this.max) this.expiries.clear();
    this.expiries.set(partition, expiresAt);
  }
}

const list = <T, U>(page: { items: T[]; cursor?: string }, present: (item: T) => U): List<U> => ({
  items: page.items.map(present),
  ...(page.cursor ? { cursor: page.cursor } : {}),
});

export class ApiService {
  private readonly known = new KnownBatches();
  constructor(private readonly opts: ApiServiceOptions) {}

  private nowS(): number {
    return nowSeconds((this.opts.store.now ?? Date.now)());
  }

  async getBatch(clientId: string, batchId: string): Promise<BatchSummary> {
    const batch = await getBatch(this.opts.store, clientId, batchId);
    if (!batch) throw new BatchNotFoundError(batchId);
    this.known.add(batchPartition(clientId, batchId), batch.expiresAt);
    return presentBatch(batch);
  }

  /** Throws BatchNotFoundError unless the client has this batch and it has not expired. */
  private async requireBatch(clientId: string, batchId: string): Promise<void> {
    if (this.known.has(batchPartition(clientId, batchId), this.nowS())) return;
    await this.getBatch(clientId, batchId);
  }

  async listBatches(clientId: string, query: ClientBatchesQuery): Promise<List<BatchSummary>> {
    const { limit, cursor, ...filter } = query;
    return list(await queryClientBatches(this.opts.store, clientId, filter, { limit, cursor }), presentBatch);
  }

  async listBatchImages(clientId: string, batchId: string, query: BatchImagesQuery): Promise<List<Image>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...filter } = query;
    return list(await queryBatchImages(this.opts.store, clientId, batchId, filter, { limit, cursor }), presentImage);
  }

  async getBatchImage(clientId: string, batchId: string, fprint: string): Promise<Image> {
    await this.requireBatch(clientId, batchId);
    const image = await getImage(this.opts.store, clientId, batchId, fprint);
    if (!image) throw new ImageNotFoundError(batchId, fprint);
    return presentImage(image);
  }

  async batchGetImages(clientId: string, batchId: string, fprints: string[]): Promise<{ items: Image[]; notFound: string[] }> {
    await this.requireBatch(clientId, batchId);
    const images = await getImages(this.opts.store, clientId, batchId, fprints);
    const found = new Set(images.map((i) => i.fprint));
    return { items: images.map(presentImage), notFound: [...new Set(fprints)].filter((f) => !found.has(f)) };
  }

  async listBatchLogs(clientId: string, batchId: string, query: LogsQuery): Promise<List<LogEntry>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...range } = query;
    return list(await queryBatchLogs(this.opts.store, clientId, batchId, range, { limit, cursor }), presentLogEntry);
  }

  async listClientImages(clientId: string, query: ClientImagesQuery): Promise<List<Image>> {
    const { limit, cursor, ...filter } = query;
    return list(await queryClientImages(this.opts.store, clientId, filter, { limit, cursor }), presentImage);
  }
}
