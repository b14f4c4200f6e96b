import { createHash } from 'node:crypto';
import {
  apiGetBatchImagesEvent,
  SAMPLE_BATCH_ID,
  SAMPLE_ENCODED_KEY,
  SAMPLE_FILE_NAME,
  s3ObjectCreatedEvent,
  sqsS3ObjectCreatedEvent,
} from '../../events';

describe('sample events captured from the local stack', () => {
  it('carry the upload key form-encoded, decoding back to the file name with space, plus, parentheses and unicode', () => {
    // Act
    const key = s3ObjectCreatedEvent().Records[0]?.s3.object.key ?? '';

    // Assert
    expect(key).toBe(SAMPLE_ENCODED_KEY);
    expect(decodeURIComponent(key.replace(/\+/g, ' '))).toBe(`uploads/demo/${SAMPLE_BATCH_ID}/${SAMPLE_FILE_NAME}`);
  });

  it('wrap the S3 event in an SQS record whose body and md5OfBody match', () => {
    // Act
    const [record] = sqsS3ObjectCreatedEvent().Records;

    // Assert
    expect(JSON.parse(record?.body ?? '')).toEqual(s3ObjectCreatedEvent());
    expect(record?.md5OfBody).toBe(
      createHash('md5')
        .update(record?.body ?? '')
        .digest('hex'),
    );
  });

  it("include a payload 2.0 GET of a batch's images with its query", () => {
    // Act
    const event = apiGetBatchImagesEvent();

    // Assert
    expect(event).toMatchObject({
      version: '2.0',
      rawPath: `/v1/batches/${SAMPLE_BATCH_ID}/images`,
      queryStringParameters: { limit: '2' },
      requestContext: { http: { method: 'GET' } },
    });
  });
});
