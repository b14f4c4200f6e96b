// An image's thumbnailUrl and imageUrl (docs/api.md): presigned GETs of its thumbnail and its processed object,
// computed locally from the record (no S3 call). A duplicate is counted on its original's record, so it shows the
// original's objects.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3RequestPresigner, getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { hasThumbnail, thumbnailKey } from '../ingest/s3-key';
import type { Image } from '../store/model';

export interface ImageLinks {
  thumbnailUrl: string | null;
  /** Absent where the read gave no object key (listings served by an index): ask for the image itself. */
  imageUrl?: string | null;
}

export const NO_LINKS: ImageLinks = { thumbnailUrl: null, imageUrl: null };

export interface ImageLinkOptions {
  s3: S3Client;
  bucket: string;
  /** Each URL stays valid at least this long after it is answered. */
  seconds: number;
  /**
   * URLs are signed as of the start of the current window, so the same image answers the same URL within it and a
   * browser keeps the thumbnail it loaded across the app's refreshes; each then lives `seconds` to `seconds + window`.
   */
  windowSeconds: number;
  now?: () => number;
}

/** A GET of one key of the bucket, presigned. */
type KeySigner = (key: string, expiresIn: number, signingDate: Date) => Promise<string>;

/**
 * The SDK's getSignedUrl resolves the endpoint and runs the command's middleware for every URL (~0.4 ms each, 80 ms
 * for a page of 100 images); the endpoint is the bucket's whatever the key, so it is resolved once (one getSignedUrl)
 * and each URL is then only signed, as getSignedUrl signs it.
 */
async function keySigner(s3: S3Client, bucket: string): Promise<KeySigner> {
  const probe = 'probe';
  const url = new URL(await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: probe })));
  const prefix = url.pathname.slice(0, -probe.length);
  const region = decodeURIComponent(url.searchParams.get('X-Amz-Credential') ?? '').split('/')[2];
  const presigner = new S3RequestPresigner({ ...s3.config, region: async () => region ?? (await s3.config.region()) });
  return async (key, expiresIn, signingDate) => {
    const path = prefix + key.split('/').map(escapeUri).join('/');
    const request: Parameters<S3RequestPresigner['presign']>[0] = {
      method: 'GET',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path,
      // As the SDK's GetObject names itself: the URL is then exactly the one getSignedUrl would sign.
      query: { 'x-id': 'GetObject' },
      headers: {},
    };
    const { query = {} } = await presigner.presign(request, { expiresIn, signingDate });
    const search = Object.entries(query)
      .map(([name, value]) => `${escapeUri(name)}=${escapeUri(String(value))}`)
      .join('&');
    return `${url.origin}${path}?${search}`;
  };
}

/** SigV4's URI encoding: RFC 3986 unreserved characters stay, everything else is percent-encoded. */
const escapeUri = (text: string): string => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export class ImageLinkSigner {
  private signer: Promise<KeySigner> | undefined;

  constructor(private readonly opts: ImageLinkOptions) {}

  async linksOf(image: Image): Promise<ImageLinks> {
    const { windowSeconds } = this.opts;
    const windowMs = windowSeconds * 1000;
    const signingDate = new Date(Math.floor((this.opts.now ?? Date.now)() / windowMs) * windowMs);
    const signer = await (this.signer ??= keySigner(this.opts.s3, this.opts.bucket).catch((err: unknown) => {
      this.signer = undefined;
      throw err;
    }));
    const sign = (key: string) => signer(key, this.opts.seconds + windowSeconds, signingDate);
    const processed = processedKey(image);
    const [thumbnailUrl, imageUrl] = await Promise.all([
      hasThumbnail(image) ? sign(thumbnailKey(image, image.fprint)) : null,
      typeof processed === 'string' ? sign(processed) : processed,
    ]);
    return { thumbnailUrl, ...(imageUrl !== undefined ? { imageUrl } : {}) };
  }
}

/** Where a classified image rests; null when it has no processed object, undefined when this read did not say. */
function processedKey(image: Image): string | null | undefined {
  if (image.status !== 'success') return null;
  if (image.restingKey === undefined) return undefined;
  return image.restingKey.startsWith('processed/') ? image.restingKey : null;
}
