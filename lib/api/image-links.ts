// An image's thumbnailUrl and imageUrl (docs/api.md): presigned GETs of its thumbnail and its processed object,
// computed locally from the record (no S3 call). A duplicate is counted on its original's record, so it shows the
// original's objects.
// Signed with the SDK's own S3 presigner, without the S3 client: the read function's bundle stays free of it (its
// endpoint rules and middleware also cost ~0.4 ms an URL through getSignedUrl, 80 ms for a page of 100 images). The
// URLs are exactly those getSignedUrl makes (test/unit/api-image-links.test.ts).
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { S3RequestPresigner, type S3RequestPresignerOptions } from '@aws-sdk/s3-request-presigner';
import type { Image } from '../domain/image';
import { hasThumbnail, thumbnailKey } from '../ingest/s3-key';

export interface ImageLinks {
  thumbnailUrl: string | null;
  imageUrl: string | null;
}

export const NO_LINKS: ImageLinks = { thumbnailUrl: null, imageUrl: null };

interface ImageLinkOptions {
  bucket: string;
  region: string;
  credentials: S3RequestPresignerOptions['credentials'];
  /** A custom S3 endpoint (the local stack's); without it, the bucket's virtual-hosted AWS endpoint in `region`. */
  endpoint?: string;
  /** Path-style URLs under the endpoint (`{endpoint}/{bucket}/{key}`), as local S3 stand-ins answer. */
  forcePathStyle?: boolean;
  /** Each URL stays valid at least this long after it is answered. */
  seconds: number;
  /**
   * URLs are signed as of the start of the current window, so the same image answers the same URL within it and a
   * browser keeps the thumbnail it loaded across the app's refreshes; each then lives `seconds` to `seconds + window`.
   */
  windowSeconds: number;
  now?: () => number;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData): Buffer | string =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 and HMAC-SHA256 for the signer, from node:crypto (the S3 client would bring its own). */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

/** SigV4's URI encoding: RFC 3986 unreserved characters stay, everything else is percent-encoded. */
const escapeUri = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** URLs kept per signing window: a page the web app reads again every few seconds is signed once (~25 µs an URL). */
export const SIGNED_URLS_KEPT = 10_000;

export class ImageLinkSigner {
  private readonly presigner: S3RequestPresigner;
  /** Where the bucket's keys are, e.g. https://bucket.s3.eu-west-1.amazonaws.com/ or http://127.0.0.1:4569/bucket/. */
  private readonly base: URL;
  /** The window's URLs by key: identical to signing again within the window, and emptied when a new one starts. */
  private readonly signed = new Map<string, Promise<string>>();
  private signedWindow = 0;

  constructor(private readonly opts: ImageLinkOptions) {
    this.presigner = new S3RequestPresigner({ region: opts.region, credentials: opts.credentials, sha256: Sha256 });
    if (!opts.endpoint) this.base = new URL(`https://${opts.bucket}.s3.${opts.region}.amazonaws.com/`);
    else {
      const endpoint = new URL(opts.endpoint);
      this.base = opts.forcePathStyle
        ? new URL(`${endpoint.origin}${endpoint.pathname.replace(/\/$/, '')}/${opts.bucket}/`)
        : new URL(`${endpoint.protocol}//${opts.bucket}.${endpoint.host}${endpoint.pathname.replace(/\/?$/, '/')}`);
    }
  }

  async linksOf(image: Image): Promise<ImageLinks> {
    const windowMs = this.opts.windowSeconds * 1000;
    const signingDate = new Date(Math.floor((this.opts.now ?? Date.now)() / windowMs) * windowMs);
    const processed = processedKey(image);
    const [thumbnailUrl, imageUrl] = await Promise.all([
      hasThumbnail(image) ? this.sign(thumbnailKey(image, image.fprint), signingDate) : null,
      processed ? this.sign(processed, signingDate) : null,
    ]);
    return { thumbnailUrl, imageUrl };
  }

  private sign(key: string, signingDate: Date): Promise<string> {
    if (signingDate.getTime() !== this.signedWindow) {
      this.signed.clear();
      this.signedWindow = signingDate.getTime();
    }
    let url = this.signed.get(key);
    if (!url) {
      if (this.signed.size >= SIGNED_URLS_KEPT) this.signed.delete(this.signed.keys().next().value as string);
      url = this.presign(key, signingDate);
      url.catch(() => this.signed.delete(key));
      this.signed.set(key, url);
    }
    return url;
  }

  private async presign(key: string, signingDate: Date): Promise<string> {
    const { base } = this;
    const path = base.pathname + key.split('/').map(escapeUri).join('/');
    const signed = await this.presigner.presign(
      {
        method: 'GET',
        protocol: base.protocol,
        hostname: base.hostname,
        ...(base.port ? { port: Number(base.port) } : {}),
        path,
        // As the SDK's GetObject names itself, so the URL is the very one getSignedUrl makes.
        query: { 'x-id': 'GetObject' },
        headers: {},
      },
      { expiresIn: this.opts.seconds + this.opts.windowSeconds, signingDate },
    );
    const query = Object.entries(signed.query ?? {})
      .map(([name, value]) => `${escapeUri(name)}=${escapeUri(String(value))}`)
      .join('&');
    return `${base.origin}${path}?${query}`;
  }
}

/**
 * The read function's signer: the role's credentials as Lambda passes them (the local stack sets the same variables),
 * the region and the S3 endpoint of functions/config.ts (AWS_ENDPOINT_URL_S3 when set: the local S3, which the browser
 * reaches too).
 */
export function imageLinkSignerOf(
  opts: Pick<ImageLinkOptions, 'bucket' | 'seconds' | 'windowSeconds'>,
  s3: { region: string; endpoint?: string; forcePathStyle: boolean },
): ImageLinkSigner {
  return new ImageLinkSigner({
    ...opts,
    region: s3.region,
    credentials: fromEnv(),
    ...(s3.endpoint ? { endpoint: s3.endpoint, forcePathStyle: s3.forcePathStyle } : {}),
  });
}

/** Where a classified image rests; null when it has no processed object (not classified, or recorded without one). */
const processedKey = (image: Image): string | null =>
  image.status === 'success' && image.restingKey?.startsWith('processed/') ? image.restingKey : null;
