import { SAMPLE_ENCODED_KEY, SAMPLE_FILE_NAME, sqsS3ObjectCreatedEvent } from '../../events';
import { uploadsIn } from '../../functions/ingest/events';
import { decodeS3Key, parseUploadKey } from '../../lib/ingest/s3-key';

describe('uploadsIn', () => {
  it('reads the upload from the captured S3-in-SQS sample event, key still form-encoded, with its ETag and creation time', () => {
    const [record] = sqsS3ObjectCreatedEvent().Records;

    expect(uploadsIn(record!)).toEqual([
      {
        bucket: 'icecat-images',
        encodedKey: SAMPLE_ENCODED_KEY,
        size: 222179,
        etag: '362e96896b26bee97126bea31cef7175',
        eventTime: Date.parse('2026-11-22T04:47:16.333Z'),
      },
    ]);
  });

  it('decodes the sample key back to the file name that was uploaded', () => {
    const [upload] = uploadsIn(sqsS3ObjectCreatedEvent().Records[0]!);

    expect(parseUploadKey(decodeS3Key(upload!.encodedKey)).fileName).toBe(SAMPLE_FILE_NAME);
  });

  it("ignores S3's test event, which carries no records", () => {
    const record = { ...sqsS3ObjectCreatedEvent().Records[0]!, body: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent' }) };

    expect(uploadsIn(record)).toEqual([]);
  });
});
