// Clients' limits and daily usage in the table (docs/design.md §11). A client's own limits live on its registry item
// (CLIENT#{clientId}, #CLIENT); its usage of one UTC day is an item beside it (CLIENT#{clientId}, #USAGE#{day}) with
// atomic counters: uploads accepted, uploads refused beyond the quota, and batches created. Neither has an index attribute, so both stay
// out of every index. This module reads them (every API function does); quota-writes.ts counts and sets them.
import { type DynamoDBDocumentClient, GetCommand, type GetCommandInput } from '@aws-sdk/lib-dynamodb';
import { type ClientLimitSettings, type ClientLimits, withDefaults } from '../../quota/limits';
import { CLIENT_PREFIX, clientKey, nowSeconds } from '../table/schema';
import { WriteExpression } from '../table/update-expression';

const USAGE_SK_PREFIX = '#USAGE#';

export const usageKey = (clientId: string, day: string) => ({ batch_id: CLIENT_PREFIX + clientId, img_fprint: USAGE_SK_PREFIX + day });

/** A day's usage item stays this long after the day (GET /v1/usage reads today's only). */
const USAGE_KEEP_DAYS = 40;

/** When a usage item written now may go (its purge_at, epoch seconds). */
export const usagePurgeAt = (nowMs: number): number => nowSeconds(nowMs) + USAGE_KEEP_DAYS * 86400;

/** A usage item's attributes by their placeholders' names; `token` a re-detection run's charge mark (redetect/run.ts). */
const USAGE_ATTRIBUTES = {
  accepted: 'accepted',
  rejected: 'rejected',
  batches: 'batches',
  counting: 'counting',
  purgeAt: 'purge_at',
} as const;

export type UsageAttribute = keyof typeof USAGE_ATTRIBUTES;

/** A write to a day's usage item, with extra attributes by name (a run's charge token). */
export const usageWrite = <E extends string = never>(
  extra: Record<E, string> = {} as Record<E, string>,
): WriteExpression<UsageAttribute | E> => new WriteExpression({ ...USAGE_ATTRIBUTES, ...extra });

/** A client's usage of one UTC day. */
export interface DailyUsage {
  day: string;
  /** Uploads counted against the quota. */
  accepted: number;
  /** Uploads beyond the quota (QuotaExceeded records). */
  rejected: number;
}

export function clientLimitsRequest(table: string, clientId: string): GetCommandInput {
  return {
    TableName: table,
    Key: clientKey(clientId),
    ProjectionExpression: '#pk, #rate, #images, #batches',
    ExpressionAttributeNames: { '#pk': 'batch_id', '#rate': 'rate_per_s', '#images': 'max_images_day', '#batches': 'max_batches_day' },
  };
}

export interface ClientLimitsStoreOptions {
  ddb: DynamoDBDocumentClient;
  tableName: string;
  defaults: ClientLimits;
  /** How long a container trusts a client's limits it has read (a change applies within it). */
  cacheMs?: number;
  now?: () => number;
}

/** Reads clients' limits (cached) and usage: all the API functions need. */
export class ClientLimitsReader {
  protected readonly cache = new Map<string, { limits: ClientLimits; until: number }>();
  protected readonly now: () => number;

  constructor(protected readonly opts: ClientLimitsStoreOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The client's limits: its own where set, else the defaults (also for a client without a registry item). */
  async limitsOf(clientId: string): Promise<ClientLimits> {
    const now = this.now();
    const cached = this.cache.get(clientId);
    if (cached && cached.until > now) return cached.limits;
    const out = await this.opts.ddb.send(new GetCommand(clientLimitsRequest(this.opts.tableName, clientId)));
    // A key's client without a registry item (registered before clients were) has the defaults.
    const item = (out.Item ?? {}) as { rate_per_s?: number; max_images_day?: number; max_batches_day?: number };
    const own: ClientLimitSettings = {
      ...(typeof item.rate_per_s === 'number' ? { ratePerSecond: item.rate_per_s } : {}),
      ...(typeof item.max_images_day === 'number' ? { maxImagesPerDay: item.max_images_day } : {}),
      ...(typeof item.max_batches_day === 'number' ? { maxBatchesPerDay: item.max_batches_day } : {}),
    };
    const limits = withDefaults(own, this.opts.defaults);
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(clientId, { limits, until: now + (this.opts.cacheMs ?? 10_000) });
    return limits;
  }

  async usage(clientId: string, day: string): Promise<DailyUsage> {
    const out = await this.opts.ddb.send(
      new GetCommand({
        TableName: this.opts.tableName,
        Key: usageKey(clientId, day),
        ProjectionExpression: '#accepted, #rejected',
        ExpressionAttributeNames: { '#accepted': 'accepted', '#rejected': 'rejected' },
        ConsistentRead: true,
      }),
    );
    const item = (out.Item ?? {}) as { accepted?: number; rejected?: number };
    return { day, accepted: item.accepted ?? 0, rejected: item.rejected ?? 0 };
  }
}
