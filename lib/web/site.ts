// The web app's files as the API serves them (GET / and GET /app/{asset}): gzip-compressed at build time, with the
// security headers of a page that holds an API key (a strict Content-Security-Policy, no framing, no sniffing).
import { gunzipSync } from 'node:zlib';
import { NotFoundError } from '../api/errors';
import { HttpAnswer } from '../api/http-answer';
import type { IceCatErrorOptions } from '../errors';

/** One built file of the web app. */
export interface WebAsset {
  /** The name under /app/ (content-hashed for scripts and styles), or "index.html" for the page itself. */
  name: string;
  contentType: string;
  /** The file gzip-compressed, base64: what the Lambda bundle embeds and what most answers send as they are. */
  gzipBase64: string;
  /** Bytes before compression. */
  bytes: number;
  etag: string;
}

export interface WebBundle {
  assets: WebAsset[];
}

export const INDEX_HTML = 'index.html';

/** Where the bucket is served from, as the API function was configured (functions/config.ts loadS3OriginSettings). */
export interface S3OriginSettings {
  /** The S3 endpoint the SDK was pointed at (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL): the local S3. */
  endpoint?: string;
  bucket?: string;
  region?: string;
}

/**
 * Origins the page may load images from and send uploads to besides its own: the bucket's S3 endpoint, whose
 * presigned GETs (thumbnails) and POST forms (uploads) the API hands out. Locally the S3 endpoint; on AWS the
 * bucket's virtual-hosted endpoints, regional and global.
 */
export function s3Origins(settings: S3OriginSettings): string[] {
  const { endpoint, bucket, region } = settings;
  if (endpoint) return [new URL(endpoint).origin];
  if (!bucket) return [];
  return [...(region ? [`https://${bucket}.s3.${region}.amazonaws.com`] : []), `https://${bucket}.s3.amazonaws.com`];
}

/** No inline script or style anywhere; images and uploads only from the API itself and the bucket. */
export function contentSecurityPolicy(s3: readonly string[]): string {
  const extra = s3.map((o) => ` ${o}`).join('');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self'${extra}`,
    `connect-src 'self'${extra}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // Presigned URLs and batch names in the address stay on this site.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

interface WebRequest {
  /** Lower-cased request headers. */
  headers: Readonly<Record<string, string | undefined>>;
}

const acceptsGzip = (headers: WebRequest['headers']): boolean =>
  (headers['accept-encoding'] ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });

export class UnknownAssetError extends NotFoundError {
  override name = 'UnknownAssetError';
  readonly asset: string;
  constructor(message: string, options: IceCatErrorOptions & { asset: string }) {
    super(message, options);
    this.asset = options.asset;
  }
}

/** Serves the built files: the page (never cached: it names the current asset hashes) and its content-hashed assets. */
export class WebSite {
  private readonly byName: Map<string, WebAsset>;
  private readonly csp: string;
  /** Uncompressed files (base64) by name, decoded once for the clients that take no gzip. */
  private readonly plainBase64 = new Map<string, string>();

  constructor(bundle: WebBundle, s3: readonly string[]) {
    this.byName = new Map(bundle.assets.map((a) => [a.name, a]));
    this.csp = contentSecurityPolicy(s3);
  }

  page(request: WebRequest): HttpAnswer {
    return this.answer(INDEX_HTML, request, { 'Cache-Control': 'no-cache', 'Content-Security-Policy': this.csp });
  }

  /** A file under /app/; unknown names (and the page itself) are UnknownAssetError. */
  asset(name: string, request: WebRequest): HttpAnswer {
    if (name === INDEX_HTML) throw new UnknownAssetError(`no web app file ${name}`, { asset: name });
    // Hashed names never change content; the icon's name is stable, so it is revalidated.
    const hashed = /-[A-Z0-9]{8}\.(js|css)$/.test(name);
    return this.answer(name, request, { 'Cache-Control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache' });
  }

  private answer(name: string, request: WebRequest, headers: Record<string, string>): HttpAnswer {
    const asset = this.byName.get(name);
    if (!asset) throw new UnknownAssetError(`no web app file ${name}`, { asset: name });
    const common = { 'Content-Type': asset.contentType, ETag: asset.etag, Vary: 'Accept-Encoding', ...SECURITY_HEADERS, ...headers };
    // Its own headers only: the API's no-store would defeat the assets' caching.
    if (request.headers['if-none-match'] === asset.etag) return new HttpAnswer(304, common, '', { apiHeaders: false });
    const file = { isBase64Encoded: true, apiHeaders: false };
    if (acceptsGzip(request.headers)) return new HttpAnswer(200, { ...common, 'Content-Encoding': 'gzip' }, asset.gzipBase64, file);
    let plain = this.plainBase64.get(name);
    if (plain === undefined) {
      plain = gunzipSync(Buffer.from(asset.gzipBase64, 'base64')).toString('base64');
      this.plainBase64.set(name, plain);
    }
    return new HttpAnswer(200, common, plain, file);
  }
}
