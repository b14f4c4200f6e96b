// s3rver's filesystem store as the hardened store (store.ts) and the middlewares see it: the parts of it they use, its
// S3Error, and its own methods as they were before the hardening replaced them.
import type { Readable } from 'node:stream';
import type { S3Refusal } from './object-keys';

/** s3rver's S3Error: thrown from the store or a middleware, s3rver answers it as S3's XML error. */
export interface S3ErrorInstance extends Error {
  code: string;
  status: number;
}
export type S3ErrorConstructor = new (code: string, message?: string, detail?: Record<string, string | number>) => S3ErrorInstance;
// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const S3Error = require('s3rver/lib/models/error') as S3ErrorConstructor;

export const s3Error = (refusal: S3Refusal): S3ErrorInstance => new S3Error(refusal.code, refusal.message, refusal.detail);

export interface S3rverObject {
  bucket: string;
  key: string;
  content: Readable | Buffer;
  metadata: Record<string, string>;
}
/** The parts of s3rver's FilesystemStore this module wraps. */
export interface FilesystemStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getBucket(bucket: string): Promise<unknown>;
  putBucket(bucket: string): Promise<unknown>;
  deleteBucket(bucket: string): Promise<unknown>;
  getSubresource(bucket: string, key: string | undefined, resourceType: string): Promise<unknown>;
  putSubresource(bucket: string, key: string | undefined, resource: { type: string }): Promise<void>;
  deleteSubresource(bucket: string, key: string | undefined, resourceType: string): Promise<void>;
  getMetadata(bucket: string, key: string): Promise<Record<string, string>>;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
  getObject(bucket: string, key: string, options?: unknown): Promise<unknown>;
  listObjects(bucket: string, options: unknown): Promise<unknown>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, metadata: unknown): Promise<Record<string, string>>;
  deleteObject(bucket: string, key: string): Promise<void>;
  initiateUpload(bucket: string, key: string, uploadId: string, metadata: unknown): Promise<void>;
  putPart(bucket: string, uploadId: string, partNumber: string | number, content: Readable): Promise<{ size: number; md5: string }>;
  putObjectMultipart(bucket: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<{ size: number; md5: string }>;
}

/** s3rver's own store methods, before hardenStore replaces them. */
export type Originals = ReturnType<typeof originalsOf>;

export function originalsOf(store: FilesystemStore) {
  return {
    getResourcePath: store.getResourcePath.bind(store),
    getBucket: store.getBucket.bind(store),
    putBucket: store.putBucket.bind(store),
    deleteBucket: store.deleteBucket.bind(store),
    getSubresource: store.getSubresource.bind(store),
    putSubresource: store.putSubresource.bind(store),
    deleteSubresource: store.deleteSubresource.bind(store),
    getObject: store.getObject.bind(store),
    getMetadata: store.getMetadata.bind(store),
    listObjects: store.listObjects.bind(store),
    deleteObject: store.deleteObject.bind(store),
    initiateUpload: store.initiateUpload.bind(store),
    putObjectMultipart: store.putObjectMultipart.bind(store),
  };
}
