import { createHmac } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPost } from '@aws-sdk/s3-presigned-post';
import { uploadPolicy } from '../../lib/api/uploads';
import { type PostedForm, postPolicyRefusal, sigV4SigningKey } from '../../local/s3/post-policy';

const signer = new S3Client({
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:4569',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
});
const FILE = { name: 'holiday/cat 1.jpg', contentType: 'image/jpeg', size: 1000 };
const context = (now = new Date()) => ({ now, secretFor: (id: string) => (id === 'S3RVER' ? 'S3RVER' : undefined) });

const presigned = (expiresSeconds = 300): Promise<PresignedPost> =>
  createPresignedPost(signer, uploadPolicy('icecat-images', 'demo', 'B1', FILE, expiresSeconds));

/** The form a browser posts: the presigned fields (overridden or extended), then a file of `fileSize` bytes. */
const posted = (post: PresignedPost, fields: Record<string, string> = {}, fileSize = 1000, bucket = 'icecat-images'): PostedForm => ({
  bucket,
  fields: Object.entries({ ...post.fields, ...fields }),
  fileSize,
});

const policyWith = (post: PresignedPost, edit: (policy: { expiration: string; conditions: unknown[] }) => void): string => {
  const policy = JSON.parse(Buffer.from(post.fields.Policy ?? '', 'base64').toString('utf8')) as {
    expiration: string;
    conditions: unknown[];
  };
  edit(policy);
  return Buffer.from(JSON.stringify(policy)).toString('base64');
};

/** The Policy and X-Amz-Signature fields of `policy` signed with the local secret under the form's credential. */
const signedAs = (post: PresignedPost, policy: string): Record<string, string> => {
  const date = (post.fields['X-Amz-Credential'] ?? '').split('/')[1] ?? '';
  const signature = createHmac('sha256', sigV4SigningKey('S3RVER', date, 'us-east-1', 's3'))
    .update(policy)
    .digest('hex');
  return { Policy: policy, 'X-Amz-Signature': signature };
};

describe('postPolicyRefusal', () => {
  it('accepts the form the API signs, posted as it was made', async () => {
    expect(postPolicyRefusal(posted(await presigned()), context())).toBeUndefined();
  });

  it('accepts the bounds of content-length-range and refuses a byte outside them', async () => {
    const post = await presigned();

    expect(postPolicyRefusal(posted(post, {}, 1), context())).toBeUndefined();
    expect(postPolicyRefusal(posted(post, {}, 1000), context())).toBeUndefined();
    expect(postPolicyRefusal(posted(post, {}, 1001), context())).toMatchObject({
      code: 'EntityTooLarge',
      detail: { ProposedSize: 1001, MaxSizeAllowed: 1000 },
    });
    expect(postPolicyRefusal(posted(post, {}, 0), context())).toMatchObject({
      code: 'EntityTooSmall',
      detail: { ProposedSize: 0, MinSizeAllowed: 1 },
    });
  });

  it('refuses another key, quoting the failed condition as S3 does', async () => {
    const refusal = postPolicyRefusal(posted(await presigned(), { key: 'uploads/demo/B1/other.jpg' }), context());

    expect(refusal).toEqual({
      code: 'AccessDenied',
      message: 'Invalid according to Policy: Policy Condition failed: ["eq", "$key", "uploads/demo/B1/holiday/cat 1.jpg"]',
      detail: {},
    });
  });

  it('matches field names case-insensitively, as S3 does', async () => {
    const post = await presigned();
    const { 'Content-Type': contentType = '', ...rest } = post.fields;

    const refusal = postPolicyRefusal(
      { bucket: 'icecat-images', fields: [...Object.entries(rest), ['content-type', contentType]], fileSize: 10 },
      context(),
    );

    expect(refusal).toBeUndefined();
  });

  it('holds a starts-with condition on its own: a key under the prefix passes, one outside fails', async () => {
    const post = await presigned();
    const policy = policyWith(post, (p) => {
      p.conditions = p.conditions.map((c) => (c && typeof c === 'object' && 'key' in c ? ['starts-with', '$key', 'uploads/demo/B1/'] : c));
    });
    const signed = signedAs(post, policy);

    expect(postPolicyRefusal(posted(post, { ...signed, key: 'uploads/demo/B1/any.jpg' }), context())).toBeUndefined();
    expect(postPolicyRefusal(posted(post, { ...signed, key: 'uploads/demo/B2/any.jpg' }), context())).toMatchObject({
      code: 'AccessDenied',
      message: 'Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "uploads/demo/B1/"]',
    });
  });

  it('refuses a Content-Type that breaks the starts-with or the exact condition', async () => {
    const post = await presigned();

    expect(postPolicyRefusal(posted(post, { 'Content-Type': 'image/png' }), context())?.message).toContain(
      '["eq", "$Content-Type", "image/jpeg"]',
    );
    expect(postPolicyRefusal(posted(post, { 'Content-Type': 'text/html' }), context())?.code).toBe('AccessDenied');
  });

  it('refuses a form posted to another bucket than the one it names', async () => {
    const refusal = postPolicyRefusal(posted(await presigned(), {}, 10, 'another-bucket'), context());

    expect(refusal?.message).toBe('Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "icecat-images"]');
  });

  it('refuses an expired policy', async () => {
    const post = await presigned(60);

    const refusal = postPolicyRefusal(posted(post), context(new Date(Date.now() + 61_000)));

    expect(refusal).toMatchObject({ code: 'AccessDenied', message: 'Invalid according to Policy: Policy expired.' });
  });

  it('refuses a policy altered after signing, and a signature made with another secret', async () => {
    const post = await presigned();
    const widened = policyWith(post, (p) => p.conditions.push(['starts-with', '$x-amz-meta-owner', '']));

    expect(postPolicyRefusal(posted(post, { Policy: widened }), context())?.code).toBe('SignatureDoesNotMatch');
    expect(postPolicyRefusal(posted(post), { now: new Date(), secretFor: () => 'another secret' })?.code).toBe('SignatureDoesNotMatch');
  });

  it('refuses an access key the local S3 does not hold', async () => {
    const post = await presigned();
    const credential = (post.fields['X-Amz-Credential'] ?? '').replace(/^S3RVER/, 'AKIDUNKNOWN');

    expect(postPolicyRefusal(posted(post, { 'X-Amz-Credential': credential }), context())).toMatchObject({
      code: 'InvalidAccessKeyId',
      detail: { AWSAccessKeyId: 'AKIDUNKNOWN' },
    });
  });

  it('refuses fields no condition names, but not x-ignore- fields', async () => {
    const post = await presigned();

    expect(postPolicyRefusal(posted(post, { 'x-amz-meta-owner': 'mallory', acl: 'public-read' }), context())?.message).toBe(
      'Invalid according to Policy: Extra input fields: x-amz-meta-owner, acl',
    );
    expect(postPolicyRefusal(posted(post, { 'x-ignore-tracking': '1' }), context())).toBeUndefined();
  });

  it('refuses a form without a policy as an anonymous upload, and one without its signature as incomplete', async () => {
    const post = await presigned();
    const { 'X-Amz-Signature': _signature, ...unsigned } = post.fields;

    expect(postPolicyRefusal({ bucket: 'icecat-images', fields: [['key', 'a.jpg']], fileSize: 1 }, context())).toMatchObject({
      code: 'AccessDenied',
    });
    expect(postPolicyRefusal({ bucket: 'icecat-images', fields: Object.entries(unsigned), fileSize: 1 }, context())).toMatchObject({
      code: 'InvalidArgument',
      detail: { ArgumentName: 'X-Amz-Signature' },
    });
  });

  it('refuses a policy that is not a policy document with InvalidPolicyDocument', async () => {
    const post = await presigned();
    const notJson = Buffer.from('{"expiration":').toString('base64');
    const noConditions = Buffer.from(JSON.stringify({ expiration: '2999-01-01T00:00:00Z' })).toString('base64');

    expect(postPolicyRefusal(posted(post, signedAs(post, notJson)), context())).toMatchObject({
      code: 'InvalidPolicyDocument',
      message: 'Invalid Policy: Invalid JSON.',
    });
    expect(postPolicyRefusal(posted(post, signedAs(post, noConditions)), context())).toMatchObject({ code: 'InvalidPolicyDocument' });
  });
});
