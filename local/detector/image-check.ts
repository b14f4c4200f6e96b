// The image a DetectLabels call names, read (from S3 when it is an S3Object) and checked as Rekognition checks it.
import { GetObjectCommand, type S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import sharp, { type Metadata } from 'sharp';
import { REKOGNITION_LIMITS as LIMITS } from '../../lib/ids';
import { DetectorParameterError, ImageTooLargeError, InvalidImageFormatError, InvalidS3ObjectError } from './errors';

function isJpeg(b: Buffer): boolean {
  return b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}
function isPng(b: Buffer): boolean {
  return b.length > 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

/** Checks what Rekognition checks before looking at an image: format, then size in pixels. */
export async function checkImage(image: Buffer): Promise<void> {
  if (!isJpeg(image) && !isPng(image)) throw new InvalidImageFormatError();
  let meta: Metadata;
  try {
    meta = await sharp(image).metadata();
  } catch (err) {
    throw new InvalidImageFormatError('Request has invalid image format', { cause: err });
  }
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new InvalidImageFormatError();
  if (Math.min(width, height) < LIMITS.minSide) {
    throw new DetectorParameterError(
      `Request has invalid parameters: the image is ${width}x${height} px, the minimum is ${LIMITS.minSide} px a side`,
    );
  }
  if (Math.max(width, height) > LIMITS.maxSide) {
    throw new ImageTooLargeError(`Image size is too large: ${width}x${height} px, the maximum is ${LIMITS.maxSide} px a side`);
  }
}

export async function readS3Image(s3: S3Client, ref: { Bucket: string; Name: string; Version?: string }): Promise<Buffer> {
  let out;
  try {
    out = await s3.send(new GetObjectCommand({ Bucket: ref.Bucket, Key: ref.Name, VersionId: ref.Version }));
  } catch (err) {
    // Missing bucket or key and refused access all read the same to Rekognition.
    if (err instanceof S3ServiceException) throw new InvalidS3ObjectError(undefined, { cause: err });
    throw err;
  }
  if (!out.Body) throw new InvalidS3ObjectError();
  if ((out.ContentLength ?? 0) > LIMITS.maxS3Bytes) {
    (out.Body as { destroy?: () => void }).destroy?.();
    throw new ImageTooLargeError();
  }
  const bytes = Buffer.from(await out.Body.transformToByteArray());
  if (bytes.length > LIMITS.maxS3Bytes) throw new ImageTooLargeError();
  return bytes;
}
