// An image's presigned thumbnailUrl and imageUrl: which records have which, and URLs exactly as the SDK's
// getSignedUrl signs them (the local S3 does not check signatures, so this is where they are proven).
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ImageLinkSigner, SIGNED_URLS_KEPT } from '../../lib/api/image-links';
import type { Image } from '../../lib/domain/image';

const WINDOW_START = Date.UTC(2026, 0, 2, 3, 5);
const NOW = WINDOW_START + 130_000;
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'session' };
// As lib/aws/clients.ts configures them: checksums only where an operation requires one.
const checksums = { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } as const;
// AWS's own endpoints even when the environment names the local S3 (jest's integration setup sets AWS_ENDPOINT_URL_S3).
const onAws = { ignoreConfiguredEndpointUrls: true } as const;
const awsS3 = new S3Client({ region: 'eu-west-1', credentials, ...checksums, ...onAws });
const awsS3East = new S3Client({ region: 'us-east-1', credentials, ...checksums, ...onAws });
const localS3 = new S3Client({ region: 'us-east-1', credentials, endpoint: 'http://127.0.0.1:4569', forcePathStyle: true, ...checksums });

/** A signer configured as the S3 client `s3` is. */
const signer = (s3 = awsS3, now = NOW) =>
  new ImageLinkSigner({
    bucket: 'images-bucket',
    region: s3 === awsS3 ? 'eu-west-1' : 'us-east-1',
    credentials,
    ...(s3 === localS3 ? { endpoint: 'http://127.0.0.1:4569', forcePathStyle: true } : {}),
    seconds: 900,
    windowSeconds: 300,
    now: () => now,
  });

const image = (over: Partial<Image> = {}): Image => ({
  clientId: 'acme',
  batchId: 'holiday',
  fprint: '0123456789abcdef0123456789abcdef',
  status: 'success',
  expiresAt: 1,
  restingKey: 'processed/acme/holiday/0123456789abcdef0123456789abcdef.jpg',
  ...over,
});

/** A URL with its query in a fixed order, to compare two signings of the same request. */
const normal = (url: string) => {
  const u = new URL(url);
  u.searchParams.sort();
  return u.toString();
};

const sdkSigned = async (s3: S3Client, key: string) =>
  normal(
    await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'images-bucket', Key: key }), {
      expiresIn: 1200,
      signingDate: new Date(WINDOW_START),
    }),
  );

describe('ImageLinkSigner', () => {
  it.each([
    ['on AWS (virtual-hosted)', awsS3, 'https://images-bucket.s3.eu-west-1.amazonaws.com/'],
    ['on AWS in us-east-1', awsS3East, 'https://images-bucket.s3.us-east-1.amazonaws.com/'],
    ['on the local S3 (path-style)', localS3, 'http://127.0.0.1:4569/images-bucket/'],
  ] as const)("signs a classified image's thumbnail and processed object as getSignedUrl does, %s", async (_where, s3, base) => {
    const links = await signer(s3).linksOf(image());

    expect(links.thumbnailUrl?.startsWith(`${base}thumbnails/acme/holiday/0123456789abcdef0123456789abcdef.webp?`)).toBe(true);
    expect(links.imageUrl?.startsWith(`${base}processed/acme/holiday/0123456789abcdef0123456789abcdef.jpg?`)).toBe(true);
    expect(normal(links.thumbnailUrl!)).toBe(await sdkSigned(s3, 'thumbnails/acme/holiday/0123456789abcdef0123456789abcdef.webp'));
    expect(normal(links.imageUrl!)).toBe(await sdkSigned(s3, 'processed/acme/holiday/0123456789abcdef0123456789abcdef.jpg'));
  });

  it('signs as of the window start, valid 15 minutes past the window: within an hour, the same URLs all window long', async () => {
    const first = await signer(awsS3, WINDOW_START + 1).linksOf(image());
    const late = await signer(awsS3, WINDOW_START + 299_999).linksOf(image());
    const next = await signer(awsS3, WINDOW_START + 300_000).linksOf(image());

    const params = new URL(first.thumbnailUrl!).searchParams;
    expect([params.get('X-Amz-Date'), params.get('X-Amz-Expires')]).toEqual(['20260102T030500Z', '1200']);
    expect(late).toEqual(first);
    expect(next.thumbnailUrl).not.toBe(first.thumbnailUrl);
  });

  it("keeps a window's URLs in one signer: the same URL again within it, a new one once the next window starts", async () => {
    let now = WINDOW_START + 1;
    const kept = new ImageLinkSigner({
      bucket: 'images-bucket',
      region: 'eu-west-1',
      credentials,
      seconds: 900,
      windowSeconds: 300,
      now: () => now,
    });

    const first = await kept.linksOf(image());
    now = WINDOW_START + 299_999;
    const again = await kept.linksOf(image());
    now = WINDOW_START + 300_000;
    const next = await kept.linksOf(image());

    expect(again).toEqual(first);
    expect(new URL(next.thumbnailUrl!).searchParams.get('X-Amz-Date')).toBe('20260102T031000Z');
    expect(next).toEqual(await signer(awsS3, WINDOW_START + 300_000).linksOf(image()));
  });

  it(`signs correctly past the ${SIGNED_URLS_KEPT} URLs it keeps, the oldest signed again when asked again`, async () => {
    const kept = signer();
    const fprint = (i: number) => i.toString(16).padStart(32, '0');
    const first = await kept.linksOf(image({ fprint: fprint(0), restingKey: undefined }));
    for (let i = 1; i <= SIGNED_URLS_KEPT; i += 1) await kept.linksOf(image({ fprint: fprint(i), restingKey: undefined }));

    expect(await kept.linksOf(image({ fprint: fprint(0), restingKey: undefined }))).toEqual(first);
    expect(normal(first.thumbnailUrl!)).toBe(await sdkSigned(awsS3, `thumbnails/acme/holiday/${fprint(0)}.webp`));
  });

  it.each([
    [
      'a failure rejected after its decode',
      image({ status: 'fail', fprint: 'fail-abc', errorCode: 'ImageTooSmall', restingKey: 'failed/acme/holiday/tiny.png' }),
      'fail-abc',
      null,
    ],
    [
      'an image Rekognition refused',
      image({ status: 'fail', errorCode: 'DetectionRejected', restingKey: 'failed/acme/holiday/x.png' }),
      '0123456789abcdef0123456789abcdef',
      null,
    ],
    [
      'a file never decoded',
      image({ status: 'fail', fprint: 'fail-def', errorCode: 'NotAnImage', restingKey: 'failed/acme/holiday/x.txt' }),
      null,
      null,
    ],
    ['an image still being classified', image({ status: 'processing', restingKey: undefined }), null, null],
  ] as const)('gives %s its thumbnail, or none, and no image URL', async (_what, record, thumbnailFprint, imageUrl) => {
    const links = await signer().linksOf(record);

    expect(links.thumbnailUrl === null ? null : new URL(links.thumbnailUrl).pathname).toBe(
      thumbnailFprint === null ? null : `/thumbnails/acme/holiday/${thumbnailFprint}.webp`,
    );
    expect(links.imageUrl).toBe(imageUrl);
  });

  it('answers no image URL for a classified image recorded without a processed object', async () => {
    const links = await signer().linksOf(image({ restingKey: undefined }));

    expect(links.thumbnailUrl).not.toBeNull();
    expect(links.imageUrl).toBeNull();
  });
});
