// What a client's own S3 key may do on the local S3, as the IAM policy of a client's role allows it on AWS
// (docs/deployment.md): write under uploads/{clientId}/ (PutObject and the multipart upload's steps) and list that
// prefix (ListObjects, ListObjectsV2 with a prefix under it); anything else, another client's prefix, a read, a delete,
// a copy, a bucket's configuration, answers AccessDenied. Pure: judged on the request as it arrived, once its signature
// has been checked (auth.ts).

import { queryParameters, type SignedRequest } from './auth';
import type { S3Refusal } from './object-keys';

/** The prefix a client's key writes and lists under. */
export const clientPrefix = (clientId: string): string => `uploads/${clientId}/`;

const denied: S3Refusal = { code: 'AccessDenied', message: 'Access Denied', detail: {} };

/** Query parameters of a listing (ListObjects, ListObjectsV2). */
const LISTING = new Set([
  'list-type',
  'prefix',
  'delimiter',
  'max-keys',
  'continuation-token',
  'start-after',
  'marker',
  'encoding-type',
  'fetch-owner',
]);

/** The sub-resource parameters each object operation a client may make carries (and no other). */
const OBJECT_OPERATIONS: Record<string, readonly (readonly string[])[]> = {
  PUT: [[], ['partNumber', 'uploadId']], // PutObject, UploadPart
  POST: [['uploads'], ['uploadId']], // CreateMultipartUpload, CompleteMultipartUpload
  DELETE: [['uploadId']], // AbortMultipartUpload
  GET: [['uploadId'], ['max-parts', 'uploadId'], ['part-number-marker', 'uploadId'], ['max-parts', 'part-number-marker', 'uploadId']], // ListParts
};

function decodePath(rawPath: string): { bucket: string; key?: string } | undefined {
  const match = /^\/([^/]+)(?:\/(.*))?$/.exec(rawPath);
  if (!match) return undefined;
  try {
    return { bucket: decodeURIComponent(match[1] ?? ''), key: match[2] ? decodeURIComponent(match[2]) : undefined };
  } catch {
    return undefined;
  }
}

/** AccessDenied unless the client's policy allows the request; undefined when it does. */
export function clientScopeRefusal(req: SignedRequest, clientId: string): S3Refusal | undefined {
  const prefix = clientPrefix(clientId);
  const queryAt = req.url.indexOf('?');
  const target = decodePath(queryAt === -1 ? req.url : req.url.slice(0, queryAt));
  const parameters = queryParameters(queryAt === -1 ? '' : req.url.slice(queryAt + 1));
  if (!target || !parameters) return denied;
  // A presigned URL's own parameters, and the SDK's operation marker, are no sub-resource.
  const names = [...new Set(parameters.map(([name]) => name).filter((name) => !name.startsWith('X-Amz-') && name !== 'x-id'))].sort();
  if (target.key === undefined) {
    const listPrefix = parameters.find(([name]) => name === 'prefix')?.[1] ?? '';
    const listing = req.method === 'GET' && names.every((name) => LISTING.has(name));
    return listing && listPrefix.startsWith(prefix) ? undefined : denied;
  }
  // A copy reads its source, which no client may read.
  if (!target.key.startsWith(prefix) || req.headers['x-amz-copy-source'] !== undefined) return denied;
  const allowed = OBJECT_OPERATIONS[req.method] ?? [];
  return allowed.some((operation) => operation.join('&') === names.join('&')) ? undefined : denied;
}
