// Support for the API's integration tests: HTTP calls to the local stack's API, clients with fresh keys, and items
// seeded directly in the stored shape (lib/store/table/attributes.ts) when a test needs volume, not classification.
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { registerApiKey } from '../../lib/auth/register';
import type { ImageStatus } from '../../lib/domain/image';
import { newBatch } from '../../lib/store/batch/summary';
import { Registrations } from '../../lib/store/client/registrations';
import { toBatchItem } from '../../lib/store/table/attributes';
import { type BatchItem, batchPartition, type ImageItem, LIMITS, reviewKey, statusTs } from '../../lib/store/table/schema';
import { aws, stackEnv, uniqueId } from '.';

export { postForm } from './upload-form';

export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  key?: string | null;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP request to the stack's API (ICECAT_API_URL). `key: null` sends no Authorization header. */
// JSON answers: each test asserts the shape it needs (and the schema tests check shapes against the OpenAPI schemas).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiAnswer<T>> {
  const url = new URL(path, stackEnv('ICECAT_API_URL'));
  for (const [name, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

export interface TestClient {
  clientId: string;
  key: string;
}

/** A new client with its own API key, so tests never see each other's images. */
export async function newClient(prefix = 'c'): Promise<TestClient> {
  const clientId = uniqueId(prefix);
  const key = await registerApiKey(new Registrations({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }), clientId);
  return { clientId, key };
}

export const DAY_S = 86_400;
const nowS = () => Math.floor(Date.now() / 1000);

export interface SeedImage {
  fprint: string;
  uploadTs: number;
  status?: ImageStatus;
  isCat?: boolean;
  fileName?: string;
  logs?: string[];
  /** Epoch s; default 30 days ahead. */
  ttl?: number;
  dupCount?: number;
  error?: { code: string; message: string };
  /** The best Cat confidence (then also its review key); none when not given. */
  catConfidence?: number;
}

/** An image item as the ingest writes it: the sparse attributes only where they apply. */
export function imageItem(clientId: string, batchId: string, seed: SeedImage): ImageItem {
  const status = seed.status ?? 'success';
  const classified = status === 'success';
  return {
    batch_id: batchPartition(clientId, batchId),
    img_fprint: seed.fprint,
    client_id: clientId,
    s3img_key: `uploads/${clientId}/${batchId}/${seed.fileName ?? `${seed.fprint}.jpg`}`,
    file_name: seed.fileName ?? `${seed.fprint}.jpg`,
    op_status: status,
    status_ts: statusTs(status, seed.uploadTs),
    upload_ts: seed.uploadTs,
    ttl: seed.ttl ?? nowS() + 30 * DAY_S,
    ...(status !== 'processing'
      ? {
          processed_key: classified
            ? `processed/${clientId}/${batchId}/${seed.fprint}.jpg`
            : `failed/${clientId}/${batchId}/${seed.fileName ?? `${seed.fprint}.jpg`}`,
        }
      : {}),
    ...(classified
      ? {
          rek_ts: seed.uploadTs + 500,
          rek_iscat: seed.isCat ?? false,
          labels: seed.isCat
            ? [
                { name: 'Cat', confidence: 91.5 },
                { name: 'Animal', confidence: 91.5 },
              ]
            : [{ name: 'Cup', confidence: 40 }],
          // As the ingest writes them: the best Cat confidence and the image's place in the review queue.
          ...(seed.catConfidence !== undefined ? { cat_conf: seed.catConfidence, review_key: reviewKey(false, seed.catConfidence) } : {}),
        }
      : {}),
    ...(classified && seed.isCat ? { cat_ts: seed.uploadTs } : {}),
    ...(seed.logs ? { logs: seed.logs.slice(0, LIMITS.logLines), log_ts: seed.uploadTs } : {}),
    ...(seed.dupCount ? { dup_count: seed.dupCount, dup_files: [`copy-of-${seed.fprint}.jpg`] } : {}),
    ...(seed.error ? { err_code: seed.error.code, err_msg: seed.error.message } : {}),
  };
}

/** A batch summary as the store writes it, with stored attributes overridden by `extra` (counters, expected…). */
export function batchItem(clientId: string, batchId: string, extra: Partial<BatchItem> = {}): BatchItem {
  return { ...toBatchItem(newBatch({ clientId, batchId, now: Date.now(), debug: false, retentionDays: 30 })), ...extra };
}

/** Writes items with BatchWriteItem (25 a request), retrying unprocessed ones. */
export async function writeItems(items: Record<string, unknown>[]): Promise<void> {
  const table = stackEnv('TABLE_NAME');
  for (let i = 0; i < items.length; i += 25) {
    let pending: Record<string, unknown>[] | undefined = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (pending && pending.length > 0) {
      const out = await aws().ddb.send(new BatchWriteCommand({ RequestItems: { [table]: pending as never } }));
      pending = out.UnprocessedItems?.[table] as Record<string, unknown>[] | undefined;
    }
  }
}

/** A batch summary plus its images, seeded directly; answers the (bare) batch id. */
export async function seedBatch(
  clientId: string,
  images: SeedImage[],
  batch: Partial<BatchItem> & { batchId?: string } = {},
): Promise<string> {
  const { batchId = uniqueId('b'), ...extra } = batch;
  await aws().ddb.send(new PutCommand({ TableName: stackEnv('TABLE_NAME'), Item: batchItem(clientId, batchId, extra) }));
  await writeItems(images.map((image) => imageItem(clientId, batchId, image) as unknown as Record<string, unknown>));
  return batchId;
}

/** Fingerprint-like ids that sort in creation order. */
export const fprints = (n: number, prefix = 'f'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);

/** Reads every page of a list endpoint, returning the pages' items and how many pages it took. */
export async function readAllPages<T>(
  path: string,
  key: string,
  query: Record<string, string | number | boolean | undefined> = {},
): Promise<{ items: T[]; pages: number; pageSizes: number[] }> {
  const items: T[] = [];
  const pageSizes: number[] = [];
  let cursor: string | undefined;
  do {
    const res = await call<{ items: T[]; cursor?: string }>('GET', path, { key, query: { ...query, cursor } });
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    items.push(...res.body.items);
    pageSizes.push(res.body.items.length);
    cursor = res.body.cursor;
  } while (cursor);
  return { items, pages: pageSizes.length, pageSizes };
}
