// What an import may read (docs/design.md §16): the operator allows each client `s3://bucket/prefix` sources; a
// prefix or a manifest (and every object a manifest names) must lie inside one of them. And which keys are images.
import type { ImportSource } from '../domain/import';
import { IceCatError, type IceCatErrorOptions } from '../errors';

/** Not an `s3://bucket/prefix` address. */
class InvalidSourceError extends IceCatError {
  override name = 'InvalidSourceError';
  readonly code = 'invalid_source';
  readonly parameter: string;
  constructor(message: string, options: IceCatErrorOptions & { parameter: string }) {
    super(message, options);
    this.parameter = options.parameter;
  }
}

/** A bucket name as S3 allows one: 3–63 of a-z 0-9 . -, starting and ending with a letter or digit. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/prefix` (the prefix may be empty) as bucket and prefix. */
export function parseS3Uri(uri: string, parameter: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(uri);
  if (!m || !BUCKET.test(m[1] ?? '')) throw new InvalidSourceError(`"${uri}" is not an s3://bucket/prefix address`, { parameter });
  return { bucket: m[1]!, prefix: m[2] ?? '' };
}

/** An allowed source holds the object or prefix: same bucket, and the key starts with its prefix. */
export const isAllowed = (allowed: readonly string[], bucket: string, key: string): boolean =>
  allowed.some((uri) => {
    try {
      const a = parseS3Uri(uri, 'sources');
      return a.bucket === bucket && key.startsWith(a.prefix);
    } catch {
      return false;
    }
  });

/** The object the batch's source starts from: the prefix, or the manifest's own key. */
export function sourceRoot(source: ImportSource): { bucket: string; key: string } {
  if ('manifest' in source) {
    const { bucket, prefix } = parseS3Uri(source.manifest, 'source.manifest');
    if (prefix === '' || prefix.endsWith('/'))
      throw new InvalidSourceError(`"${source.manifest}" names no object`, { parameter: 'source.manifest' });
    return { bucket, key: prefix };
  }
  if (!BUCKET.test(source.bucket)) throw new InvalidSourceError(`"${source.bucket}" is not a bucket name`, { parameter: 'source.bucket' });
  return { bucket: source.bucket, key: source.prefix };
}

/** The extensions of the formats the ingest decodes: a key is an image by its name. */
const IMAGE_EXTENSIONS = new Set(['jpg', 'jpeg', 'jpe', 'png', 'webp', 'gif', 'tif', 'tiff', 'heic', 'heif', 'avif']);

export function isImageKey(key: string): boolean {
  if (key.endsWith('/')) return false;
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 && IMAGE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

/**
 * What a job's tasks may read: the batch's prefix, or for a manifest (which Batch Operations reads without us) the
 * client's allowed sources.
 */
export async function jobAllow(
  sources: { sourcesOf(clientId: string): Promise<readonly string[]> },
  clientId: string,
  source: ImportSource,
): Promise<string[]> {
  return 'manifest' in source ? [...(await sources.sourcesOf(clientId))] : [`s3://${source.bucket}/${source.prefix}`];
}
