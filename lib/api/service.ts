// The API's read operations (DESIGN §3), free of HTTP: a client id and validated input in, response shapes out. Batch
// reads check the batch's owner first, so another client's batch is answered exactly like a missing one. Creating a
// batch is batch-creation.ts (the only operation that needs S3).
import {
  getBatchSummary,
  getImage,
  getImages,
  queryBatchImages,
  queryBatchLogs,
  queryClientImages,
  type StoreContext,
} from '../store/queries';
import { BatchNotFoundError, ImageNotFoundError } from './errors';
import { presentBatch, presentImage, presentLogEntry } from './present';
import type { BatchImagesQuery, BatchSummary, ClientImagesQuery, Image, LogEntry, LogsQuery } from './schemas';

export interface ApiServiceOptions {
  store: StoreContext;
}

export interface List<T> {
  items: T[];
  cursor?: string;
}

/** Batch owners never change: a container remembers them (bounded) so most batch reads cost one request. */
class OwnerCache {
  private readonly owners = new Map<string, { owner: string; ttl: number }>();
  constructor(private readonly max = 10_000) {}
  get(batchId: string, nowS: number): string | undefined {
    const hit = this.owners.get(batchId);
    return hit && hit.ttl > nowS ? hit.owner : undefined;
  }
  set(batchId: string, owner: string, ttl: number): void {
    if (this.owners.size >= this.max) this.owners.clear();
    this.owners.set(batchId, { owner, ttl });
  }
}

export class ApiService {
  private readonly owners = new OwnerCache();
  constructor(private readonly opts: ApiServiceOptions) {}

  private now(): number {
    return (this.opts.store.now ?? Date.now)();
  }

  async getBatch(clientId: string, batchId: string): Promise<BatchSummary> {
    const item = await getBatchSummary(this.opts.store, batchId);
    if (!item || item.owner_id !== clientId) throw new BatchNotFoundError(batchId);
    this.owners.set(batchId, item.owner_id, item.ttl);
    return presentBatch(item);
  }

  /** Throws BatchNotFoundError unless the batch exists, has not expired, and is this client's. */
  private async requireBatch(clientId: string, batchId: string): Promise<void> {
    const nowS = Math.floor(this.now() / 1000);
    let owner = this.owners.get(batchId, nowS);
    if (owner === undefined) {
      const item = await getBatchSummary(this.opts.store, batchId);
      if (item) this.owners.set(batchId, item.owner_id, item.ttl);
      owner = item?.owner_id;
    }
    if (owner !== clientId) throw new BatchNotFoundError(batchId);
  }

  async listBatchImages(clientId: string, batchId: string, query: BatchImagesQuery): Promise<List<Image>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...filter } = query;
    const page = await queryBatchImages(this.opts.store, batchId, clientId, filter, { limit, cursor });
    return { items: page.items.map(presentImage), ...(page.cursor ? { cursor: page.cursor } : {}) };
  }

  async getBatchImage(clientId: string, batchId: string, fprint: string): Promise<Image> {
    await this.requireBatch(clientId, batchId);
    const item = await getImage(this.opts.store, batchId, fprint, clientId);
    if (!item) throw new ImageNotFoundError(batchId, fprint);
    return presentImage(item);
  }

  async batchGetImages(clientId: string, batchId: string, fprints: string[]): Promise<{ items: Image[]; notFound: string[] }> {
    await this.requireBatch(clientId, batchId);
    const items = await getImages(this.opts.store, batchId, fprints, clientId);
    const found = new Set(items.map((i) => i.img_fprint));
    return { items: items.map(presentImage), notFound: [...new Set(fprints)].filter((f) => !found.has(f)) };
  }

  async listBatchLogs(clientId: string, batchId: string, query: LogsQuery): Promise<List<LogEntry>> {
    await this.requireBatch(clientId, batchId);
    const { limit, cursor, ...range } = query;
    const page = await queryBatchLogs(this.opts.store, batchId, range, { limit, cursor });
    return { items: page.items.map(presentLogEntry), ...(page.cursor ? { cursor: page.cursor } : {}) };
  }

  async listClientImages(clientId: string, query: ClientImagesQuery): Promise<List<Image>> {
    const { limit, cursor, ...filter } = query;
    const page = await queryClientImages(this.opts.store, clientId, filter, { limit, cursor });
    return { items: page.items.map(presentImage), ...(page.cursor ? { cursor: page.cursor } : {}) };
  }
}
