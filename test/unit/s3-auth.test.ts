// Who the local S3 answers (local/s3/auth.ts), without a server: presigned URLs made by the SDK's presigner, checked
// again here as the local S3 checks them, and the requests it refuses before any signature is computed.
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { authRefusal, type SignedRequest, sigV4Escape } from '../../local/s3/auth';

const ENDPOINT = 'http://127.0.0.1:4569';
const SECRETS: Record<string, string> = { S3RVER: 'S3RVER' };
const ctx = (now = new Date()) => ({ now, secretFor: (id: string) => SECRETS[id] });
const client = new S3Client({
  endpoint: ENDPOINT,
  region: 'us-east-1',
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  forcePathStyle: true,
});
afterAll(() => client.destroy());

/** The request a browser sends for a URL: its path and query as written, and the Host header. */
const requestFor = (url: string, method = 'GET', headers: SignedRequest['headers'] = {}): SignedRequest => {
  const u = new URL(url);
  return { method, url: `${u.pathname}${u.search}`, headers: { host: u.host, ...headers } };
};
const presign = (key: string, opts: { expiresIn?: number; signingDate?: Date; disposition?: string } = {}) =>
  getSignedUrl(
    client,
    new GetObjectCommand({
      Bucket: 'icecat-images',
      Key: key,
      ...(opts.disposition ? { ResponseContentDisposition: opts.disposition } : {}),
    }),
    { expiresIn: opts.expiresIn ?? 900, ...(opts.signingDate ? { signingDate: opts.signingDate } : {}) },
  );

describe('presigned URLs', () => {
  it.each([
    ['a plain key', 'processed/demo/b1/f1.jpg', undefined],
    ['spaces, plus, unicode and reserved characters', "uploads/demo/b1/trip 2/cat+1 (é)!*'.jpg", undefined],
    ['a response header override in the query', 'exports/demo/b1/x.csv', 'attachment; filename="b1 export.csv"'],
  ])('accepts one the SDK signed for %s', async (_, key, disposition) => {
    const url = await presign(key, { ...(disposition ? { disposition } : {}) });

    expect(authRefusal(requestFor(url), ctx())).toBeUndefined();
  });

  it('refuses one whose key, method or signature changed with SignatureDoesNotMatch', async () => {
    const url = await presign('processed/demo/b1/f1.jpg');
    const forged = url.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000');

    expect(authRefusal(requestFor(url.replace('f1.jpg', 'f2.jpg')), ctx())?.code).toBe('SignatureDoesNotMatch');
    expect(authRefusal(requestFor(url, 'DELETE'), ctx())?.code).toBe('SignatureDoesNotMatch');
    expect(authRefusal(requestFor(forged), ctx())?.code).toBe('SignatureDoesNotMatch');
  });

  it('refuses one past its expiry with AccessDenied, and one for an unknown access key with InvalidAccessKeyId', async () => {
    const url = await presign('processed/demo/b1/f1.jpg', { expiresIn: 60, signingDate: new Date(Date.now() - 61_000) });
    const stranger = (await presign('processed/demo/b1/f1.jpg')).replace('X-Amz-Credential=S3RVER', 'X-Amz-Credential=AKIDSTRANGER');

    expect(authRefusal(requestFor(url), ctx())).toMatchObject({ code: 'AccessDenied', message: 'Request has expired' });
    expect(authRefusal(requestFor(stranger), ctx())?.code).toBe('InvalidAccessKeyId');
  });
});

describe('requests without a signature', () => {
  it.each([
    ['GET', '/icecat-images?list-type=2', {}],
    ['GET', '/icecat-images/processed/demo/b1/f1.jpg', {}],
    ['PUT', '/icecat-images/uploads/demo/b1/x.jpg', { 'content-type': 'image/jpeg' }],
    ['DELETE', '/icecat-images/processed/demo/b1/f1.jpg', {}],
    ['POST', '/icecat-images?delete', { 'content-type': 'text/plain' }],
    ['POST', '/icecat-images', { 'content-type': 'text/plain' }],
    ['POST', '/icecat-images/uploads/demo/b1/x.jpg?uploads', { 'content-type': 'multipart/form-data; boundary=x' }],
  ])('refuses %s %s with AccessDenied', (method, url, headers) => {
    expect(authRefusal({ method, url, headers: { host: '127.0.0.1:4569', ...headers } }, ctx())).toMatchObject({ code: 'AccessDenied' });
  });

  it('lets a POST form to the bucket and a CORS preflight through, as S3 does (the form is checked by its policy)', () => {
    const form = { method: 'POST', url: '/icecat-images', headers: { 'content-type': 'multipart/form-data; boundary=----x' } };
    const preflight = { method: 'OPTIONS', url: '/icecat-images', headers: { origin: 'http://127.0.0.1:3000' } };

    expect([authRefusal(form, ctx()), authRefusal(preflight, ctx())]).toEqual([undefined, undefined]);
  });

  it('refuses a header-signed request dated more than 15 minutes off with RequestTimeTooSkewed', () => {
    const authorization =
      'AWS4-HMAC-SHA256 Credential=S3RVER/20200101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00';
    const headers = { host: '127.0.0.1:4569', authorization, 'x-amz-date': '20200101T000000Z', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };

    expect(authRefusal({ method: 'GET', url: '/icecat-images', headers }, ctx())?.code).toBe('RequestTimeTooSkewed');
  });
});

it('escapes as SigV4 wants: RFC 3986 unreserved characters only', () => {
  expect(sigV4Escape("a b+c/é!*'()~._-")).toBe('a%20b%2Bc%2F%C3%A9%21%2A%27%28%29~._-');
});
