// Requests as the stand-ins receive them: every HTTP request reaching an http.Server of this process (the local S3,
// dynalite, the detector of a stack started in-process by local/stack/stack.ts) is counted by service (the port it came
// in on), operation (S3's from the method, path, query and copy header; DynamoDB's from X-Amz-Target) and sender
// (the function whose local key signed it, local/iam/iam.ts; `operator` for any other key; `form` for an unsigned POST,
// a presigned form's upload). Retries are requests too: they are counted as S3 or DynamoDB would bill them.
import { EventEmitter } from 'node:events';
import { type IncomingMessage, Server } from 'node:http';
import { functionOfAccessKey } from '../local/iam/iam';

export type Service = 's3' | 'dynamodb' | 'rekognition';

/** Counts by `service operation sender`. */
export type Tally = Map<string, number>;

/** The S3 operation of a path-style request. */
export function s3Operation(method: string, url: string, headers: IncomingMessage['headers']): string {
  const [pathname = '/', query = ''] = url.split('?');
  const params = new URLSearchParams(query);
  const onBucket = pathname.replace(/^\/+/, '').split('/').filter(Boolean).length <= 1;
  if (method === 'POST' && onBucket) return params.has('delete') ? 'DeleteObjects' : 'PostObject';
  if (onBucket) return method === 'GET' ? (params.get('list-type') === '2' ? 'ListObjectsV2' : 'ListObjects') : `${method}Bucket`;
  if (method === 'PUT') return headers['x-amz-copy-source'] ? 'CopyObject' : params.has('partNumber') ? 'UploadPart' : 'PutObject';
  return { GET: 'GetObject', HEAD: 'HeadObject', DELETE: 'DeleteObject' }[method] ?? `${method}Object`;
}

/** Who signed the request: the function whose key it carries, `operator`, or `form` for an unsigned POST. */
export function senderOf(url: string, headers: IncomingMessage['headers'], method: string): string {
  const credential =
    /Credential=([^/,\s]+)/.exec(headers.authorization ?? '')?.[1] ??
    new URLSearchParams(url.split('?')[1] ?? '').get('X-Amz-Credential')?.split('/')[0];
  if (!credential) return method === 'POST' ? 'form' : 'unsigned';
  return functionOfAccessKey(credential) ?? 'operator';
}

/** Counts the requests reaching the services at these endpoints from now on, until stop(). */
export function tallyRequests(endpoints: Partial<Record<Service, string>>): { snapshot(): Tally; stop(): void } {
  const byPort = new Map<number, Service>();
  for (const [service, url] of Object.entries(endpoints)) if (url) byPort.set(Number(new URL(url).port), service as Service);
  const counts: Tally = new Map();
  const had = Object.getOwnPropertyDescriptor(Server.prototype, 'emit');
  Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const req = args[0] as IncomingMessage;
      const service = byPort.get(req.socket.localPort ?? 0);
      if (service) {
        const url = req.url ?? '/';
        const op =
          service === 's3'
            ? s3Operation(req.method ?? 'GET', url, req.headers)
            : String(req.headers['x-amz-target'] ?? req.method).replace(/^.*\./, '');
        const k = `${service} ${op} ${senderOf(url, req.headers, req.method ?? 'GET')}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    }
    return EventEmitter.prototype.emit.call(this, event, ...args);
  };
  return {
    snapshot: () => new Map(counts),
    stop: () => {
      if (had) Object.defineProperty(Server.prototype, 'emit', had);
      else delete (Server.prototype as { emit?: unknown }).emit;
    },
  };
}

/** The counts of `after` beyond `before`, keeping the keys `keep` accepts. */
export function tallyBetween(
  before: Tally,
  after: Tally,
  keep: (service: string, op: string, sender: string) => boolean = () => true,
): Tally {
  const out: Tally = new Map();
  for (const [k, n] of after) {
    const [service = '', op = '', sender = ''] = k.split(' ');
    const d = n - (before.get(k) ?? 0);
    if (d > 0 && keep(service, op, sender)) out.set(k, d);
  }
  return out;
}

/** A tally as `{ "s3 GetObject ingest": n / per, ... }`, sorted, and the sums per service. */
export function perImage(t: Tally, per: number, round: (n: number) => number): Record<string, unknown> {
  const sorted = [...t].sort(([a], [b]) => a.localeCompare(b));
  const sum = (service: string) => sorted.filter(([k]) => k.startsWith(`${service} `)).reduce((n, [, c]) => n + c, 0);
  return {
    s3: round(sum('s3') / per),
    dynamodb: round(sum('dynamodb') / per),
    total: round((sum('s3') + sum('dynamodb')) / per),
    byRequest: Object.fromEntries(sorted.map(([k, n]) => [k, round(n / per)])),
  };
}
