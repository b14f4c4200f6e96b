import { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { uploadPolicy } from '../../lib/api/uploads';

const FILE = { name: 'holiday/cat 1.jpg', contentType: 'image/jpeg', size: 123_456 };
const s3 = new S3Client({
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:4569',
  forcePathStyle: true,
  credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
});

type Condition = Record<string, string> | [string, string | number, string | number];

async function policyOf(expiresSeconds = 900) {
  const post = await createPresignedPost(s3, uploadPolicy('icecat-images', 'acme', 'B1', FILE, expiresSeconds));
  const policy = JSON.parse(Buffer.from(post.fields.Policy ?? '', 'base64').toString('utf8')) as {
    expiration: string;
    conditions: Condition[];
  };
  return { post, policy };
}

describe('presigned POST policy', () => {
  it('restricts the upload to its exact key', async () => {
    const { policy } = await policyOf();

    expect(policy.conditions).toContainEqual({ key: 'uploads/acme/B1/holiday/cat 1.jpg' });
  });

  it('has no starts-with condition on the key', async () => {
    const { policy } = await policyOf();

    expect(policy.conditions.filter((c) => Array.isArray(c) && c[1] === '$key')).toEqual([]);
  });

  it('bounds the size from 1 byte to the declared size', async () => {
    const { policy } = await policyOf();

    expect(policy.conditions).toContainEqual(['content-length-range', 1, 123_456]);
  });

  it('accepts only image/ content types, and exactly the declared one', async () => {
    const { policy } = await policyOf();

    expect(policy.conditions).toContainEqual(['starts-with', '$Content-Type', 'image/']);
    expect(policy.conditions).toContainEqual({ 'Content-Type': 'image/jpeg' });
  });

  it('is bound to the bucket', async () => {
    const { policy } = await policyOf();

    expect(policy.conditions).toContainEqual({ bucket: 'icecat-images' });
  });

  it('expires after the configured lifetime', async () => {
    const before = Date.now();

    const { policy } = await policyOf(600);

    const expires = Date.parse(policy.expiration);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 600_000);
  });

  it('hands out the fields a form must send, signed', async () => {
    const { post } = await policyOf();

    expect(post.fields).toMatchObject({
      key: 'uploads/acme/B1/holiday/cat 1.jpg',
      'Content-Type': 'image/jpeg',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    });
    expect(post.fields['X-Amz-Signature']).toMatch(/^[0-9a-f]{64}$/);
  });
});
