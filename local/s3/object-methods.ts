// The hardened store's (store.ts) object methods: writes whole (a temporary renamed into place), copies all or
// nothing, deletes that tolerate a neighbour's folder cleanup, each holding the object's lock.
import crypto from 'node:crypto';
import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type FileWrite, holdFolder, replaceFiles, type Staged, writeContent } from './files';
import { type KeyLocks, objectName } from './key-locks';
import { type FilesystemStore, type Originals, S3Error, type S3rverObject } from './s3rver-store';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ALLOWED_METADATA } = require('s3rver/lib/models/object') as { ALLOWED_METADATA: string[] };

/** The checksum (when given) and metadata files of an object, as s3rver reads them. */
export function metadataFiles(
  store: FilesystemStore,
  bucket: string,
  key: string,
  metadata: Record<string, string>,
  md5?: string,
): FileWrite[] {
  const stored = Object.fromEntries(
    Object.entries(metadata).filter(([name]) => ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')),
  );
  return [
    ...(md5 ? [{ file: store.getResourcePath(bucket, key, 'object.md5'), write: (temporary: string) => writeFile(temporary, md5) }] : []),
    {
      file: store.getResourcePath(bucket, key, 'metadata.json'),
      write: (temporary: string) => writeFile(temporary, JSON.stringify(stored, null, 2)),
    },
  ];
}

/** The object methods that take the objects' locks, for a flow that already holds `held`. */
export function objectMethods(
  store: FilesystemStore,
  original: Originals,
  locks: KeyLocks,
): (held: ReadonlySet<string>) => Pick<FilesystemStore, 'putObject' | 'getObject' | 'deleteObject' | 'copyObject'> {
  const lockingMethods = (held: ReadonlySet<string>): Pick<FilesystemStore, 'putObject' | 'getObject' | 'deleteObject' | 'copyObject'> => ({
    putObject: (object) => putObject(store, locks, object, held),
    getObject: (bucket, key, options) => locks.with([objectName(bucket, key)], () => original.getObject(bucket, key, options), held),
    deleteObject: (bucket, key) => locks.with([objectName(bucket, key)], () => deleteObject(original, bucket, key), held),
    copyObject: (srcBucket, srcKey, destBucket, destKey, metadata) =>
      locks.with(
        [objectName(srcBucket, srcKey), objectName(destBucket, destKey)],
        () => copyObject(store, srcBucket, srcKey, destBucket, destKey, metadata),
        held,
      ),
  });
  return lockingMethods;
}

async function putObject(
  store: FilesystemStore,
  locks: KeyLocks,
  object: S3rverObject,
  held: ReadonlySet<string>,
): Promise<{ size: number; md5: string }> {
  const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
  // Fits a file name: the last segment is at most 233 bytes, "._S3rver_object" 15, this suffix 7.
  const temporary = `${objectPath}.${crypto.randomBytes(3).toString('hex')}`;
  const content: Staged = { commit: () => rename(temporary, objectPath), discard: () => rm(temporary, { force: true }) };
  let written: { size: number; md5: string };
  try {
    await holdFolder(path.dirname(objectPath), temporary);
    written = await writeContent(temporary, object.content);
  } catch (err) {
    await content.discard();
    throw err;
  }
  await locks.with(
    [objectName(object.bucket, object.key)],
    () => replaceFiles([...metadataFiles(store, object.bucket, object.key, object.metadata, written.md5), content]),
    held,
  );
  return written;
}

async function deleteObject(original: Originals, bucket: string, key: string): Promise<void> {
  try {
    await original.deleteObject(bucket, key);
  } catch (err) {
    // The object's files are gone (s3rver ignores their ENOENT); its cleanup of the emptied folders raced another
    // delete's in the same folder (already removed) or a new object in it (no longer empty). Both are fine.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY') throw err;
  }
}

async function copyObject(
  store: FilesystemStore,
  srcBucket: string,
  srcKey: string,
  destBucket: string,
  destKey: string,
  metadata: unknown,
) {
  try {
    return await copyWhole(store, srcBucket, srcKey, destBucket, destKey, metadata as Record<string, string> | undefined);
  } catch (err) {
    // The source went away between s3rver's existence check and the copy.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: srcKey });
    }
    throw err;
  }
}

/**
 * s3rver's copy, with its files written whole and all or none of them (a copy that runs out of space leaves the
 * destination as it was): every file is copied to a temporary first, then the checksum and metadata are renamed
 * into place, the object last, so that a key appears in a listing only with both in place.
 */
async function copyWhole(
  store: FilesystemStore,
  srcBucket: string,
  srcKey: string,
  destBucket: string,
  destKey: string,
  replacement?: Record<string, string>,
) {
  const source = (resource: string) => store.getResourcePath(srcBucket, srcKey, resource);
  const destination = (resource: string) => store.getResourcePath(destBucket, destKey, resource);
  if (source('object') !== destination('object')) {
    const { etag } = await store.getMetadata(srcBucket, srcKey); // ENOENT when the source is missing; makes its checksum
    await mkdir(path.dirname(destination('object')), { recursive: true });
    const copied = (resource: string): FileWrite => ({
      file: destination(resource),
      write: (temporary) => copyFile(source(resource), temporary),
    });
    const metadata: FileWrite[] = replacement
      ? metadataFiles(store, destBucket, destKey, replacement, JSON.parse(etag ?? '""') as string)
      : [copied('object.md5'), { ...copied('metadata.json'), absentSource: true }];
    await replaceFiles([...metadata, copied('object')]);
  } else if (replacement) {
    await store.putMetadata(destBucket, destKey, replacement);
  }
  return store.getMetadata(destBucket, destKey);
}
