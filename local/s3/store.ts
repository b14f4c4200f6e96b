// Hardens s3rver's filesystem store in place: names it cannot store answer S3 errors instead of touching the disk,
// every write (object, metadata, checksum, copy) goes through a temporary file renamed into place (a failed write, or
// a process killed mid-write, leaves the previous file whole), a metadata file torn by an older version is dropped
// rather than failing every listing of its folder, deletes in one folder at once do not trip over each other's
// folder cleanup, and operations on one key are serialized so that a conditional request's check and its action are
// atomic, as on S3.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LIST_ATTEMPTS, replaceFiles, type Staged, writeContent } from './files';
import { KeyLocks, NONE_HELD } from './key-locks';
import { bucketNameRefusal, keyRefusal } from './object-keys';
import { metadataFiles, objectMethods } from './object-methods';
import { type FilesystemStore, type Originals, originalsOf, S3Error, s3Error } from './s3rver-store';

/** Longest path the OS opens (PATH_MAX, terminating NUL included). */
const MAX_PATH_BYTES = 4095;
/** An UploadId as s3rver makes them (16 random bytes, hex). */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;

/**
 * The hardened store's locks: `with` runs `work` holding `names`, giving it a view of the store whose locking methods
 * know what the flow holds (a request's middleware hands that view to s3rver's controllers as `ctx.store`).
 */
export interface StoreLocks {
  with<T>(names: readonly string[], work: (store: FilesystemStore) => Promise<T>): Promise<T>;
}

/** An object's ETag as S3 answers it (unquoted); rejects with ENOENT when the object is missing. */
export async function storedETag(store: FilesystemStore, bucket: string, key: string): Promise<string> {
  const metadata = await store.getMetadata(bucket, key);
  return JSON.parse(metadata.etag ?? '""') as string;
}

/** "bucket/key" of an x-amz-copy-source header, fully URL-decoded, without a ?versionId; undefined when malformed. */
export function decodeCopySource(header: string): string | undefined {
  const queryAt = header.indexOf('?');
  try {
    return decodeURIComponent(queryAt === -1 ? header : header.slice(0, queryAt));
  } catch {
    return undefined;
  }
}

/** Patches `store` (s3rver's instance) in place; returns the locks its requests share. */
export function hardenStore(store: FilesystemStore): StoreLocks {
  const locks = new KeyLocks();
  const original = originalsOf(store);
  refuseBadNames(store, original);
  keepBucketAnswers(store, original);
  hardenMetadata(store, original);
  const lockingMethods = objectMethods(store, original, locks);
  Object.assign(store, lockingMethods(NONE_HELD));
  hardenMultipart(store, original);
  return {
    with: (names, work) => locks.with(names, (held) => work(Object.assign(Object.create(store) as FilesystemStore, lockingMethods(held)))),
  };
}

/** Names the store cannot hold answer S3's errors before anything touches the disk. */
function refuseBadNames(store: FilesystemStore, original: Originals): void {
  store.getResourcePath = (bucket, key = '', resource) => {
    const refusal = bucketNameRefusal(bucket) ?? (key === '' ? undefined : keyRefusal(key));
    if (refusal) throw s3Error(refusal);
    const resourcePath = original.getResourcePath(bucket, key, resource);
    if (Buffer.byteLength(resourcePath) > MAX_PATH_BYTES) {
      throw new S3Error('KeyTooLongError', 'Your key is too long for the local S3: its path in the data directory exceeds the OS limit', {
        Size: Buffer.byteLength(key),
      });
    }
    return resourcePath;
  };
}

function keepBucketAnswers(store: FilesystemStore, original: Originals): void {
  // Every request looks up its bucket (a stat of its folder) and the bucket's CORS and website configurations (a
  // file read each, and an ENOENT thrown and caught for the website one the local bucket never has) before its own
  // work. They change only through the store's own bucket and configuration calls, so each answer is kept until
  // such a call for that bucket (docs/design.md §9). An object's own subresources are read each time.
  const buckets = new Map<string, Promise<unknown>>();
  const configurations = new Map<string, Promise<unknown>>();
  const forgetBucket = (bucket: string) => {
    buckets.delete(bucket);
    for (const name of [...configurations.keys()]) if (name.startsWith(`${bucket}/`)) configurations.delete(name);
  };
  /** The answer of `read`, kept under `name` once it resolved (a failed read is not kept). */
  const kept = (cache: Map<string, Promise<unknown>>, name: string, read: () => Promise<unknown>): Promise<unknown> => {
    const known = cache.get(name);
    if (known) return known;
    const reading = read();
    cache.set(name, reading);
    reading.catch(() => {
      if (cache.get(name) === reading) cache.delete(name);
    });
    return reading;
  };

  // An invalid name is not a bucket (NoSuchBucket), and cannot become one.
  store.getBucket = (bucket) =>
    bucketNameRefusal(bucket)
      ? Promise.resolve(null)
      : kept(buckets, bucket, async () => {
          const found = await original.getBucket(bucket);
          // A missing bucket may be made by anyone: only one that exists is kept.
          if (found === null) queueMicrotask(() => buckets.delete(bucket));
          return found;
        });
  store.putBucket = async (bucket) => {
    const refusal = bucketNameRefusal(bucket);
    if (refusal) throw s3Error(refusal);
    forgetBucket(bucket);
    try {
      return await original.putBucket(bucket);
    } finally {
      forgetBucket(bucket);
    }
  };
  store.deleteBucket = async (bucket) => {
    forgetBucket(bucket);
    try {
      return await original.deleteBucket(bucket);
    } finally {
      forgetBucket(bucket);
    }
  };
  store.getSubresource = (bucket, key, resourceType) =>
    !key
      ? kept(configurations, `${bucket}/${resourceType}`, () => original.getSubresource(bucket, key, resourceType))
      : original.getSubresource(bucket, key, resourceType);
  store.putSubresource = async (bucket, key, resource) => {
    configurations.delete(`${bucket}/${resource.type}`);
    try {
      await original.putSubresource(bucket, key, resource);
    } finally {
      configurations.delete(`${bucket}/${resource.type}`);
    }
  };
  store.deleteSubresource = async (bucket, key, resourceType) => {
    configurations.delete(`${bucket}/${resourceType}`);
    try {
      await original.deleteSubresource(bucket, key, resourceType);
    } finally {
      configurations.delete(`${bucket}/${resourceType}`);
    }
  };
}

/** Metadata and checksum files written whole, torn ones dropped, listings that walk through concurrent writes. */
function hardenMetadata(store: FilesystemStore, original: Originals): void {
  // s3rver's own writes these with writeFile, which truncates first: a reader (or a kill) in between saw a torn file.
  store.putMetadata = (bucket, key, metadata, md5) => replaceFiles(metadataFiles(store, bucket, key, metadata, md5));

  store.getMetadata = async (bucket, key) => {
    const read = async () => {
      const metadata = await original.getMetadata(bucket, key);
      if (ETAG.test(metadata.etag ?? '')) return metadata;
      // A torn checksum file: s3rver computes it again from the object when it is missing.
      await rm(store.getResourcePath(bucket, key, 'object.md5'), { force: true });
      return original.getMetadata(bucket, key);
    };
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      // A torn metadata file: the object stays readable, with S3's default metadata.
      await rm(store.getResourcePath(bucket, key, 'metadata.json'), { force: true });
      return read();
    }
  };

  // s3rver walks the folders synchronously while writes in the thread pool go on: a temporary file renamed into place
  // (or an object deleted) between the walk's readdir and its stat fails the whole listing with ENOENT. S3 lists
  // through concurrent writes, so the walk is taken again.
  store.listObjects = async (bucket, options) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await original.listObjects(bucket, options);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === LIST_ATTEMPTS) throw err;
      }
    }
  };
}

/** Multipart uploads: no upload files cut short left behind, parts written whole, unknown uploads and parts refused. */
function hardenMultipart(store: FilesystemStore, original: Originals): void {
  store.initiateUpload = async (bucket, key, uploadId, metadata) => {
    store.getResourcePath(bucket, key, 'object');
    try {
      await original.initiateUpload(bucket, key, uploadId, metadata);
    } catch (err) {
      // s3rver writes the upload's key and metadata files in place: one cut short (a full disk) must not stay behind.
      await rm(path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId), { recursive: true, force: true });
      throw err;
    }
  };

  const uploadDirectory = async (bucket: string, uploadId: string): Promise<string> => {
    const directory = path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    const found = UPLOAD_ID.test(uploadId) && (await stat(directory).catch(() => undefined))?.isDirectory();
    if (!found) {
      throw new S3Error(
        'NoSuchUpload',
        'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
        { UploadId: uploadId },
      );
    }
    return directory;
  };

  store.putPart = async (bucket, uploadId, partNumber, content) => {
    const number = Number(partNumber);
    if (!Number.isInteger(number) || number < 1 || number > 10_000) {
      throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive', {
        ArgumentName: 'partNumber',
        ArgumentValue: String(partNumber),
      });
    }
    const directory = await uploadDirectory(bucket, uploadId);
    const partPath = path.join(directory, String(number));
    // Whole or not at all, as an object (a part cut short by a full disk is not a part): a temporary, then renamed.
    const temporary = path.join(directory, `.tmp-${crypto.randomBytes(4).toString('hex')}`);
    const part: Staged = { commit: () => rename(temporary, partPath), discard: () => rm(temporary, { force: true }) };
    let written: { size: number; md5: string };
    try {
      written = await writeContent(temporary, content);
    } catch (err) {
      await part.discard();
      throw err;
    }
    const md5 = written.md5;
    await replaceFiles([{ file: `${partPath}.md5`, write: (t) => writeFile(t, md5) }, part]);
    return written;
  };

  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    const directory = await uploadDirectory(bucket, uploadId);
    for (const part of parts) {
      if (!fs.existsSync(path.join(directory, String(part.number)))) {
        throw new S3Error(
          'InvalidPart',
          'One or more of the specified parts could not be found.  The part may not have been uploaded, or the ' +
            "specified entity tag may not match the part's entity tag.",
          { PartNumber: part.number },
        );
      }
    }
    return original.putObjectMultipart(bucket, uploadId, parts);
  };
}

/** An S3 ETag as s3rver stores it: quoted MD5 hex, with a part count for a multipart upload. */
const ETAG = /^"[0-9a-f]{32}(-\d+)?"$/;
