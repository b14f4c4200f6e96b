// The API as the page uses it (its shapes: the clients' contract, shared with the CLI). The key travels only in the
// Authorization header; no URL the page builds ever holds it.
import type { Query } from '../lib/api/client-contract';
import { WebAppError } from './errors';

export type {
  Accuracy,
  Agreement,
  AuditResult,
  BatchCounts,
  BatchStatus,
  BatchSummary,
  Box,
  CreatedBatch,
  Estimate as IntervalEstimate,
  Image,
  ImportSummary,
  LogEntry,
  MoreUploads,
  OpStatus,
  Page,
  Query,
  Reclassified,
  Review,
  SimilarGroups,
  UploadForm,
  Usage,
} from '../lib/api/client-contract';
export { batchPath, reviewPath } from '../lib/api/client-contract';

/** The API answered an error: its status and code as it said them. */
export class ApiRequestError extends WebAppError {
  override name = 'ApiRequestError';
  readonly status: number;
  readonly code: string;
  constructor(message: string, options: { status: number; code: string }) {
    super(message);
    this.status = options.status;
    this.code = options.code;
  }
}

function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export interface Api {
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  /** DELETE; the JSON answer, if any. */
  del<T>(path: string): Promise<T>;
  /** A file the API answers (an export), as a Blob. */
  blob(path: string, query?: Query): Promise<Blob>;
}

/** Calls with the key; a 401 signs the page out (the key was revoked or mistyped). */
export function createApi(key: string, onUnauthorized: () => void): Api {
  async function request(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.ok) return res;
    let code = 'http_error';
    let message = `${method} ${path.split('?')[0]} answered ${res.status}`;
    try {
      const parsed = (await res.json()) as { error?: { code?: string; message?: string } };
      code = parsed.error?.code ?? code;
      message = parsed.error?.message ?? message;
    } catch {
      // Not the API's error shape (a proxy's page): the status says enough.
    }
    if (res.status === 401) onUnauthorized();
    throw new ApiRequestError(message, { status: res.status, code });
  }
  const parsed = async (res: Response) => {
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  };
  return {
    get: async <T>(path: string, query?: Query) => (await request('GET', withQuery(path, query))).json() as Promise<T>,
    post: async (path, body) => parsed(await request('POST', path, body ?? {})),
    put: async (path, body) => parsed(await request('PUT', path, body)),
    del: async (path) => parsed(await request('DELETE', path)),
    blob: async (path, query) => (await request('GET', withQuery(path, query))).blob(),
  };
}

/** A route this API does not have yet (or a batch it does not know): the page hides what needs it. */
export const isNotFound = (error: unknown): boolean => error instanceof ApiRequestError && error.status === 404;
