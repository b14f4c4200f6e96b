// The API as the page uses it (DESIGN §3 shapes). The key travels only in the Authorization header; no URL the page
// builds ever holds it.

export type OpStatus = 'pending' | 'processing' | 'success' | 'fail' | 'duplicate';
export type BatchStatus = 'open' | 'processing' | 'done';

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface Image {
  batchId: string;
  fprint: string;
  fileName: string | null;
  status: OpStatus;
  isCat: boolean | null;
  catConfidence?: number | null;
  labels: { name: string; confidence: number }[];
  cats?: { confidence: number; box?: Box | null }[];
  uploadedAt: string | null;
  classifiedAt: string | null;
  duplicates: number;
  duplicateFiles?: string[];
  reused?: boolean;
  error: { code: string; message: string } | null;
  thumbnailUrl?: string | null;
  imageUrl?: string | null;
}

export interface BatchSummary {
  batchId: string;
  status: BatchStatus;
  closed?: boolean;
  expected: number | null;
  counts: { total: number; pending?: number; success: number; fail: number; duplicate: number; reused?: number; cats: number };
  debug: boolean;
  createdAt: string;
  closedAt?: string | null;
  doneAt?: string | null;
  expiresAt?: string;
}

export interface Page<T> {
  items: T[];
  cursor?: string;
}

export interface LogEntry {
  batchId: string;
  fprint: string;
  fileName: string | null;
  status: OpStatus | null;
  loggedAt: string | null;
  lines: string[];
}

export interface UploadForm {
  file: string;
  url: string;
  fields: Record<string, string>;
}

export interface CreatedBatch {
  batchId: string;
  uploads: UploadForm[];
  expiresAt: string;
  batch: BatchSummary;
}

export interface SimilarGroups {
  groups: { fprints: string[]; maxDistance: number }[];
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export const batchPath = (batchId: string): string => `/v1/batches/${encodeURIComponent(batchId)}`;

function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export interface Api {
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
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
    throw new ApiError(res.status, code, message);
  }
  return {
    get: async <T>(path: string, query?: Query) => (await request('GET', withQuery(path, query))).json() as Promise<T>,
    post: async (path, body) => {
      const res = await request('POST', path, body ?? {});
      const text = await res.text();
      return text ? JSON.parse(text) : undefined;
    },
    blob: async (path, query) => (await request('GET', withQuery(path, query))).blob(),
  };
}

/** A route this API does not have yet (or a batch it does not know): the page hides what needs it. */
export const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.status === 404;
