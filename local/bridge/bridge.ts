// The local bucket notification: every object created under uploads/ becomes one SQS message holding the AWS-exact
// S3 event record (s3rver's own events are version 2.0 with a raw key), sent to the local queue (queue/queue.ts) before
// the upload's answer, as S3 → SQS notifications are configured on AWS (resources/storage.yml).
import { type CreatedObject, s3EventMessage, s3EventRecord } from '../../lib/reconcile/s3-event';
import { LOCAL_ACCOUNT_ID, LOCAL_NAMES } from '../contract';
import type { LocalQueue } from '../queue/queue';
import type { LocalObjectEvent } from '../s3/s3';

export interface ObjectEventSource {
  onObjectEvent(listener: (event: LocalObjectEvent) => void): () => void;
  eTagOf(bucket: string, key: string): Promise<string>;
}

export interface NotificationOptions {
  bucket: string;
  /** The notification's prefix filter: objects the ingest moves elsewhere must not trigger it again. */
  prefix?: string;
  region?: string;
  log?: (line: string) => void;
}

/** The S3 event record the local S3 would send on AWS for one created object. */
export const localS3EventMessage = (object: CreatedObject, region: string = LOCAL_NAMES.region): string =>
  s3EventMessage(
    s3EventRecord(object, {
      region,
      requesterPrincipalId: `AWS:AIDA${LOCAL_NAMES.accessKeyId}LOCALUSER`,
      ownerPrincipalId: `A${LOCAL_ACCOUNT_ID}LOCAL`,
    }),
  );

/** Sends one SQS message per ObjectCreated event under the prefix, as an S3 → SQS notification does. */
export function connectS3Notifications(source: ObjectEventSource, queue: LocalQueue, opts: NotificationOptions): () => void {
  const prefix = opts.prefix ?? 'uploads/';
  return source.onObjectEvent((event) => {
    const { operation } = event;
    if (event.bucket !== opts.bucket || operation === 'Delete' || !event.key.startsWith(prefix)) return;
    const send = (eTag: string | undefined) => {
      try {
        queue.send(localS3EventMessage({ ...event, operation, eTag }, opts.region));
      } catch (err) {
        // Only while the stack stops: the object stays under uploads/ and the sweep queues it after the next start.
        (opts.log ?? console.warn)(`[bridge] ${event.key} not queued (${String(err)}): the sweep will find it`);
      }
    };
    if (event.eTag !== undefined) {
      send(event.eTag);
      return;
    }
    // s3rver's copy events carry no ETag: read it from the store, keeping the queue busy meanwhile.
    const release = queue.hold();
    source
      .eTagOf(event.bucket, event.key)
      .then(send)
      .catch((err: unknown) => (opts.log ?? console.warn)(`[bridge] no ETag for ${event.key}: ${String(err)}`))
      .finally(release);
  });
}
