// A source's objects a page at a time (docs/design.md §16), each with the cursor that comes after it, so a lister
// can checkpoint after any object: a bucket and prefix through ListObjectsV2 (the cursor is the last key handled: it
// lists on with StartAfter, in S3's own key order), or a manifest, a CSV of `bucket,key[,versionId]` as S3 Batch
// Operations reads it (keys URL-encoded) or an S3 Inventory `manifest.json` with its CSV files (gzipped or not), whose
// cursor is `{file}:{byte offset}` of the next line.
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { SourceObject } from '../domain/image';
import type { ImportSource } from '../domain/import';
import { IceCatError } from '../errors';
import { parseS3Uri } from './sources';

/** A manifest that cannot be read as one (its format, a line, its files). */
class ManifestError extends IceCatError {
  override name = 'ManifestError';
  readonly code = 'invalid_manifest';
}

export interface Listed {
  object: SourceObject;
  /** The cursor once this object is handled. */
  after: string;
}

export interface SourcePage {
  objects: Listed[];
  /** false: this was the source's last page. */
  more: boolean;
}

const unquote = (etag: string | undefined): string | undefined => etag?.replace(/^"|"$/g, '');

/** One page of a bucket and prefix, after the key `cursor`. */
async function prefixPage(
  s3: S3Client,
  source: { bucket: string; prefix: string },
  cursor: string | undefined,
  size: number,
): Promise<SourcePage> {
  const out = await s3.send(
    new ListObjectsV2Command({
      Bucket: source.bucket,
      Prefix: source.prefix,
      MaxKeys: size,
      ...(cursor !== undefined ? { StartAfter: cursor } : {}),
    }),
  );
  const objects = (out.Contents ?? []).flatMap((o) => {
    if (o.Key === undefined) return [];
    const etag = unquote(o.ETag);
    return [
      {
        object: { bucket: source.bucket, key: o.Key, ...(etag ? { etag } : {}), ...(o.Size !== undefined ? { size: o.Size } : {}) },
        after: o.Key,
      },
    ];
  });
  return { objects, more: out.IsTruncated === true && objects.length > 0 };
}

/** One CSV line's fields: commas outside double quotes, `""` an escaped quote. */
export function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field);
  return fields;
}

/** A manifest key as S3 Batch Operations and Inventory write it: URL-encoded (a '+' is a space, as in S3's events). */
function decodeKey(encoded: string, where: string): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch (cause) {
    throw new ManifestError(`${where}: the key "${encoded}" is not URL-encoded`, { cause });
  }
}

/** The columns of a manifest's CSV: Batch Operations' (bucket, key, versionId) or an inventory's fileSchema. */
interface Columns {
  bucket: number;
  key: number;
  versionId?: number;
  size?: number;
  etag?: number;
  deleteMarker?: number;
}

const BATCH_OPERATIONS_COLUMNS: Columns = { bucket: 0, key: 1, versionId: 2 };

function objectOfLine(fields: string[], cols: Columns, where: string): SourceObject | undefined {
  const at = (i: number | undefined) => (i === undefined ? undefined : fields[i]?.trim() || undefined);
  if (at(cols.deleteMarker) === 'true') return undefined;
  const bucket = at(cols.bucket);
  const key = at(cols.key);
  if (!bucket || !key) throw new ManifestError(`${where}: a line needs a bucket and a key`);
  const versionId = at(cols.versionId);
  const etag = unquote(at(cols.etag));
  const size = at(cols.size) === undefined ? undefined : Number(at(cols.size));
  return {
    bucket,
    key: decodeKey(key, where),
    ...(versionId ? { versionId } : {}),
    ...(etag ? { etag } : {}),
    ...(size !== undefined && Number.isInteger(size) && size >= 0 ? { size } : {}),
  };
}

/** A manifest's CSV files and their columns, read once per lister run. */
interface ManifestFiles {
  files: { bucket: string; key: string }[];
  columns: Columns;
}

async function getText(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const bytes = Buffer.from(await out.Body!.transformToByteArray());
  return key.endsWith('.gz') ? gunzipSync(bytes) : bytes;
}

/** The manifest's files: itself (a CSV), or an inventory manifest.json's list with its fileSchema. */
async function manifestFiles(s3: S3Client, manifest: string): Promise<ManifestFiles> {
  const { bucket, prefix: key } = parseS3Uri(manifest, 'source.manifest');
  if (!key.endsWith('.json')) return { files: [{ bucket, key }], columns: BATCH_OPERATIONS_COLUMNS };
  let doc: { fileFormat?: string; fileSchema?: string; files?: { key?: string }[]; destinationBucket?: string };
  try {
    doc = JSON.parse((await getText(s3, bucket, key)).toString('utf8')) as typeof doc;
  } catch (cause) {
    throw new ManifestError(`${manifest} is not an S3 Inventory manifest.json`, { cause });
  }
  if (doc.fileFormat !== 'CSV' || typeof doc.fileSchema !== 'string' || !Array.isArray(doc.files))
    throw new ManifestError(`${manifest}: only CSV inventories are read (fileFormat CSV, fileSchema and files)`);
  const names = doc.fileSchema.split(',').map((n) => n.trim());
  const col = (n: string) => (names.indexOf(n) >= 0 ? names.indexOf(n) : undefined);
  if (col('Bucket') === undefined || col('Key') === undefined) throw new ManifestError(`${manifest}: its fileSchema has no Bucket and Key`);
  // The files live in the inventory's destination bucket (its ARN), where manifest.json is too.
  const filesBucket = doc.destinationBucket?.replace(/^arn:aws:s3:::/, '') || bucket;
  return {
    files: doc.files.flatMap((f) => (typeof f.key === 'string' ? [{ bucket: filesBucket, key: f.key }] : [])),
    columns: {
      bucket: col('Bucket')!,
      key: col('Key')!,
      ...(col('VersionId') !== undefined ? { versionId: col('VersionId')! } : {}),
      ...(col('Size') !== undefined ? { size: col('Size')! } : {}),
      ...(col('ETag') !== undefined ? { etag: col('ETag')! } : {}),
      ...(col('IsDeleteMarker') !== undefined ? { deleteMarker: col('IsDeleteMarker')! } : {}),
    },
  };
}

/** Reads a manifest's pages; its files' text is kept while the lister runs (one file at a time). */
class ManifestReader {
  private held: { index: number; text: Buffer } | undefined;

  constructor(
    private readonly s3: S3Client,
    private readonly manifest: ManifestFiles,
  ) {}

  private async file(index: number): Promise<Buffer> {
    if (this.held?.index !== index) {
      const f = this.manifest.files[index]!;
      this.held = { index, text: await getText(this.s3, f.bucket, f.key) };
    }
    return this.held.text;
  }

  async page(cursor: string | undefined, size: number): Promise<SourcePage> {
    let [fileIndex, offset] = (cursor ?? '0:0').split(':').map(Number) as [number, number];
    const objects: Listed[] = [];
    while (objects.length < size && fileIndex < this.manifest.files.length) {
      const text = await this.file(fileIndex);
      while (objects.length < size && offset < text.length) {
        let end = text.indexOf(0x0a, offset);
        if (end < 0) end = text.length;
        const line = text.subarray(offset, end).toString('utf8').replace(/\r$/, '');
        const where = `${this.manifest.files[fileIndex]!.key} at byte ${offset}`;
        offset = end + 1;
        const after = offset >= text.length ? `${fileIndex + 1}:0` : `${fileIndex}:${offset}`;
        const object = line.trim() === '' ? undefined : objectOfLine(csvFields(line), this.manifest.columns, where);
        // A blank line or a delete marker moves the cursor on without an object: handled with the next one listed.
        if (object) objects.push({ object, after });
        else if (objects.length > 0) objects[objects.length - 1]!.after = after;
      }
      if (offset >= text.length) {
        fileIndex += 1;
        offset = 0;
      }
    }
    return { objects, more: fileIndex < this.manifest.files.length };
  }
}

/** The pages of a source, whichever kind it is. */
export async function sourcePages(
  s3: S3Client,
  source: ImportSource,
): Promise<(cursor: string | undefined, size: number) => Promise<SourcePage>> {
  if (!('manifest' in source)) return (cursor, size) => prefixPage(s3, source, cursor, size);
  const reader = new ManifestReader(s3, await manifestFiles(s3, source.manifest));
  return (cursor, size) => reader.page(cursor, size);
}
