// From the event shapes Lambda delivers to what the pipeline takes: S3 notifications inside SQS messages.
import type { S3Event, SQSRecord } from 'aws-lambda';
import type { UploadEvent } from '../../lib/ingest/deps';

/** The S3 records in an SQS message; S3's s3:TestEvent and non-creation events carry none. */
export function uploadsIn(record: SQSRecord): UploadEvent[] {
  const body = JSON.parse(record.body) as Partial<S3Event>;
  return (body.Records ?? [])
    .filter((r) => r.eventSource === 'aws:s3' && r.eventName.startsWith('ObjectCreated:'))
    .map((r) => ({
      bucket: r.s3.bucket.name,
      encodedKey: r.s3.object.key,
      size: r.s3.object.size,
      ...(r.s3.object.eTag ? { etag: r.s3.object.eTag } : {}),
      ...(Number.isFinite(Date.parse(r.eventTime)) ? { eventTime: Date.parse(r.eventTime) } : {}),
    }));
}
