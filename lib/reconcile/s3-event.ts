// The S3 ObjectCreated notification as S3 writes it into an SQS message: what the local bucket notification sends
// for every upload, and what the reconciliation sweep sends again for an upload whose notification was lost.

import { randomBytes } from 'node:crypto';
import type { S3EventRecord } from 'aws-lambda';
import { decodeS3Key, tryParseUploadKey } from '../ingest/s3-key';

const FORM_SAFE = /^[A-Za-z0-9*\-._/]$/;

/**
 * An object key as S3 writes it into event notifications: application/x-www-form-urlencoded over the UTF-8
 * bytes (space → '+', '+' → %2B, everything but A–Z a–z 0–9 * - . _ percent-encoded, upper-case hex),
 * except that '/' is kept.
 */
export function encodeS3EventKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (byte === 0x20) out += '+';
    else if (byte < 0x80 && FORM_SAFE.test(char)) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

let lastSequencer = 0n;
/** A hexadecimal sequencer that grows with every event, as S3's does for one key. */
function nextSequencer(now: number = Date.now()): string {
  const candidate = BigInt(now) << 20n;
  lastSequencer = candidate > lastSequencer ? candidate : lastSequencer + 1n;
  return lastSequencer.toString(16).toUpperCase().padStart(18, '0');
}

/** One created object, as a notification describes it. */
export interface CreatedObject {
  operation: 'Put' | 'Post' | 'Copy' | 'CompleteMultipartUpload';
  bucket: string;
  /** The raw key (encoded here). */
  key: string;
  size: number;
  eTag?: string;
  sourceIp: string;
  time: Date;
}

interface S3RecordOptions {
  region: string;
  /** Who made the request, and who owns the bucket (S3's canonical ids; nothing downstream reads them). */
  requesterPrincipalId?: string;
  ownerPrincipalId?: string;
  /** The notification configuration's id; the sweep names itself here, so logs tell its messages apart. */
  configurationId?: string;
  requestId?: string;
  sequencer?: string;
}

/** The eventVersion 2.1 record S3 sends for an ObjectCreated event. */
export function s3EventRecord(object: CreatedObject, opts: S3RecordOptions): S3EventRecord {
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: opts.region,
    eventTime: object.time.toISOString(),
    eventName: `ObjectCreated:${object.operation}`,
    userIdentity: { principalId: opts.requesterPrincipalId ?? 'AWS:AIDAICECATRECONCILE' },
    requestParameters: { sourceIPAddress: object.sourceIp },
    responseElements: {
      'x-amz-request-id': opts.requestId ?? randomBytes(8).toString('hex').toUpperCase(),
      'x-amz-id-2': randomBytes(48).toString('base64'),
    },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: opts.configurationId ?? 'icecat-uploads',
      bucket: {
        name: object.bucket,
        ownerIdentity: { principalId: opts.ownerPrincipalId ?? 'AICECAT' },
        arn: `arn:aws:s3:::${object.bucket}`,
      },
      object: {
        key: encodeS3EventKey(object.key),
        size: object.size,
        eTag: object.eTag ?? '',
        sequencer: opts.sequencer ?? nextSequencer(object.time.getTime()),
      },
    },
  };
}

/** The SQS message body of an S3 → SQS notification: one record per message, as S3 sends them. */
export const s3EventMessage = (record: S3EventRecord): string => JSON.stringify({ Records: [record] });

/** The decoded object keys an SQS message body notifies (none for anything else, such as s3:TestEvent). */
export function keysInS3Message(body: string): { bucket: string; key: string }[] {
  try {
    const parsed = JSON.parse(body) as { Records?: S3EventRecord[] };
    return (parsed.Records ?? []).flatMap((r) =>
      r?.s3?.object?.key === undefined ? [] : [{ bucket: r.s3.bucket.name, key: decodeS3Key(r.s3.object.key) }],
    );
  } catch {
    return [];
  }
}

/** The objects an SQS body notifies, as s3:// URLs, for logs and dead letters. */
export function describeS3Message(body: string): string {
  const keys = keysInS3Message(body);
  return keys.length > 0 ? keys.map((k) => `s3://${k.bucket}/${k.key}`).join(', ') : body.slice(0, 200);
}

/**
 * The fair queue's MessageGroupId of an upload notification (docs/design.md §11): the client the first key is uploaded
 * under. None for a key outside the upload layout or a body that notifies nothing: SQS then treats the message as a
 * tenant of its own.
 */
export function uploadGroupOf(body: string): string | undefined {
  const [first] = keysInS3Message(body);
  return first ? tryParseUploadKey(first.key)?.clientId : undefined;
}
