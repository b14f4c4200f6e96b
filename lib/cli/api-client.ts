// The HTTP API's client (docs/design.md §3): bearer key, JSON in and out, retries of transient failures, and the
// API's error bodies turned into the CLI's errors. It never needs AWS credentials: uploads go through presigned forms.

import type {
  Accuracy,
  Agreement,
  AuditResult,
  BatchSummary,
  CreatedBatch,
  DeclaredFile,
  Image,
  ImportSourceAddress,
  KnownFingerprints,
  LogEntry,
  MoreUploads,
  Page,
  Query,
  RetriedImport,
  SimilarGroups,
} from '../api/client-contract';
import { batchPath, reviewPath } from '../api/client-contract';
import { ApiAnswerError, KeyRefusedError, NetworkError, OutOfSpaceError, RouteMissingError, saysOutOfSpace } from './errors';
import {
  DEFAULT_RETRY_POLICY,
  describeNetworkError,
  isTransientStatus,
  type RetryHooks,
  type RetryPolicy,
  retryAfterMs,
  TransientError,
  withRetry,
} from './retry';

interface ApiClientOptions {
  apiUrl: string;
  apiKey: string;
  retry?: RetryPolicy;
  retryHooks?: RetryHooks;
  /** Per request, before a try counts as a network failure. */
  timeoutMs?: number;
}

interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Retry transient failures (default true; only the ones a repeat cannot harm, unless `idempotent`). */
  retry?: boolean;
  /**
   * The request may be repeated whatever became of an earlier try (default: GET, HEAD, PUT and DELETE). Any other
   * request is retried only when it surely did not take effect: refused before it was sent, or answered 429.
   */
  idempotent?: boolean;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
// Failures of a connection that never carried the request.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** A try that failed in a way that leaves unknown whether the server acted on it (a lost answer, a 5xx). */
export class AmbiguousFailureError extends TransientError {
  override name = 'AmbiguousFailureError';
}

interface CreateBatchRequest {
  batchId?: string;
  debug?: boolean;
  files: DeclaredFile[];
}

export interface ImageFilter {
  status?: string;
  cat?: boolean;
  /** Any of these labels (sent as one comma-separated parameter, as API Gateway joins repeated ones). */
  label?: string[];
  minConfidence?: number;
  capturedFrom?: string;
  capturedTo?: string;
  order?: 'captured';
}

const ROUTE_MISSING = /^no route /;

export class ApiClient {
  private readonly base: URL;

  constructor(private readonly opts: ApiClientOptions) {
    this.base = new URL(opts.apiUrl.endsWith('/') ? opts.apiUrl : `${opts.apiUrl}/`);
  }

  url(path: string, query: Query = {}): URL {
    const url = new URL(path.replace(/^\//, ''), this.base);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url;
  }

  /** One call answered 2xx, as a Response (body unread); API errors thrown as CliErrors. */
  async fetch(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = this.url(path, options.query);
    const idempotent = options.idempotent ?? IDEMPOTENT_METHODS.has(method);
    const once = async (): Promise<Response> => {
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.opts.apiKey}`,
            accept: 'application/json',
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
      } catch (err) {
        const what = describeNetworkError(err);
        const Failure = idempotent || NOT_SENT_CODES.has(what) ? TransientError : AmbiguousFailureError;
        throw new Failure(`${method} ${url.pathname}: ${what}`, { cause: err });
      }
      if (res.ok) return res;
      const error = await readError(res);
      if (saysOutOfSpace(res.status, error.code, error.message)) throw new OutOfSpaceError(error.message, { service: 'the API' });
      // Beyond a daily quota: no retry helps before 00:00 UTC, which the message names.
      if (error.code === 'quota_exceeded') throw new ApiAnswerError(error.message, { status: res.status, code: error.code });
      if (isTransientStatus(res.status)) {
        const Failure = idempotent || res.status === 429 ? TransientError : AmbiguousFailureError;
        throw new Failure(`${method} ${url.pathname}: ${res.status} ${error.message}`, {
          retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
        });
      }
      if (res.status === 401) throw new KeyRefusedError(`the API refused the key (${error.message}): check ICECAT_API_KEY or --api-key`);
      if (res.status === 404 && ROUTE_MISSING.test(error.message))
        throw new RouteMissingError(
          `this API does not offer ${method} ${templateOf(url.pathname)} yet (route not found): it needs a newer IceCatWrangler server`,
          { method, path: templateOf(url.pathname) },
        );
      throw new ApiAnswerError(error.message, { status: res.status, code: error.code });
    };
    try {
      if (options.retry === false) return await once();
      return await withRetry(once, this.opts.retry ?? DEFAULT_RETRY_POLICY, {
        ...this.opts.retryHooks,
        retryable: (err) => !(err instanceof AmbiguousFailureError),
      });
    } catch (err) {
      if (err instanceof TransientError) {
        throw new NetworkError(`no answer from the API at ${this.base.origin}: ${err.message}`, { cause: err });
      }
      throw err;
    }
  }

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.fetch(method, path, options);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** With a batchId, a repeat answers 409 instead of making a second batch: only then is it retried. */
  createBatch(request: CreateBatchRequest): Promise<CreatedBatch> {
    return this.json('POST', '/v1/batches', { body: request, idempotent: request.batchId !== undefined });
  }

  /** A batch that classifies a source where it is; as createBatch, a repeat with a batchId answers 409. */
  createImport(batchId: string | undefined, source: ImportSourceAddress): Promise<CreatedBatch> {
    return this.json('POST', '/v1/batches', { body: { ...(batchId ? { batchId } : {}), source }, idempotent: batchId !== undefined });
  }

  /** An import's failed images sent again; not repeated after a lost answer (the answer's count would be lost). */
  retryImport(batchId: string): Promise<RetriedImport> {
    return this.json('POST', batchPath(batchId, ':retry'));
  }

  /** Not retried after a lost answer: each call grows the batch's `expected` (see uploader.ts for how it recovers). */
  moreUploads(batchId: string, files: DeclaredFile[]): Promise<MoreUploads> {
    return this.json('POST', batchPath(batchId, '/uploads'), { body: { files } });
  }

  /** Fresh forms for files already declared; `expected` stays, so it may be repeated. */
  renewUploads(batchId: string, files: DeclaredFile[]): Promise<MoreUploads> {
    return this.json('POST', batchPath(batchId, '/uploads'), { body: { files, renew: true }, idempotent: true });
  }

  /** Closing again with the same count answers the summary again. */
  closeBatch(batchId: string, expected?: number): Promise<BatchSummary> {
    return this.json('POST', batchPath(batchId, ':close'), { ...(expected === undefined ? {} : { body: { expected } }), idempotent: true });
  }

  /** Which of these fingerprints (at most 1,000) the client already has answers for. */
  knownFingerprints(fprints: string[]): Promise<KnownFingerprints> {
    // Asking changes nothing: safe to repeat.
    return this.json('POST', '/v1/fingerprints:known', { body: { fprints }, idempotent: true });
  }

  getBatch(batchId: string): Promise<BatchSummary> {
    return this.json('GET', batchPath(batchId));
  }

  async deleteBatch(batchId: string): Promise<void> {
    await (await this.fetch('DELETE', batchPath(batchId))).arrayBuffer();
  }

  similar(batchId: string, maxDistance?: number): Promise<SimilarGroups> {
    return this.json('GET', batchPath(batchId, '/similar'), { query: { maxDistance } });
  }

  getImage(batchId: string, fprint: string): Promise<Image> {
    return this.json('GET', batchPath(batchId, `/images/${encodeURIComponent(fprint)}`));
  }

  /** Giving the same verdict again changes nothing, so it may be repeated. */
  review(batchId: string, fprint: string, verdict: { isCat: boolean; note?: string }): Promise<Image> {
    return this.json('PUT', reviewPath(batchId, fprint), { body: verdict });
  }

  withdrawReview(batchId: string, fprint: string): Promise<Image> {
    return this.json('DELETE', reviewPath(batchId, fprint));
  }

  agreement(batchId: string): Promise<Agreement> {
    return this.json('GET', batchPath(batchId, '/agreement'));
  }

  /** Draws `size` more images into the batch's audit sample. */
  audit(batchId: string, size: number): Promise<AuditResult> {
    return this.json('POST', batchPath(batchId, '/audit'), { body: { size } });
  }

  /** The machine's accuracy estimated from the audit sample's reviews. */
  accuracy(batchId: string): Promise<Accuracy> {
    return this.json('GET', batchPath(batchId, '/accuracy'));
  }

  /** The review queue: images no person has reviewed, least certain first. */
  reviewQueue(batchId: string): AsyncGenerator<Image> {
    return this.pages<Image>(batchPath(batchId, '/images'), { review: 'pending', order: 'uncertain' });
  }

  /** Every page of a list, in order. */
  async *pages<T>(path: string, query: Query = {}): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const page = await this.json<Page<T>>('GET', path, { query: { ...query, limit: 100, cursor } });
      yield* page.items;
      cursor = page.cursor;
    } while (cursor);
  }

  images(batchId: string, filter: ImageFilter = {}): AsyncGenerator<Image> {
    return this.pages<Image>(batchPath(batchId, '/images'), {
      status: filter.status,
      cat: filter.cat,
      label: filter.label?.length ? filter.label.join(',') : undefined,
      minConfidence: filter.minConfidence,
      capturedFrom: filter.capturedFrom,
      capturedTo: filter.capturedTo,
      order: filter.order,
    });
  }

  logs(batchId: string): AsyncGenerator<LogEntry> {
    return this.pages<LogEntry>(batchPath(batchId, '/logs'));
  }
}

async function readError(res: Response): Promise<{ code: string; message: string }> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (body.error && typeof body.error.message === 'string') {
      return { code: typeof body.error.code === 'string' ? body.error.code : `http_${res.status}`, message: body.error.message };
    }
  } catch {
    // Not the API's JSON (a proxy's page, say): the status alone speaks.
  }
  return { code: `http_${res.status}`, message: `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` };
}

/** /v1/batches/x/images → /v1/batches/{batchId}/images, so a missing route is named as the API documents it. */
function templateOf(pathname: string): string {
  return pathname.replace(/^\/v1\/batches\/[^/:]+/, '/v1/batches/{batchId}');
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
