import {
  DetectLabelsCommand,
  ImageTooLargeException,
  InvalidImageFormatException,
  InvalidParameterException,
  InvalidS3ObjectException,
  type DetectLabelsCommandInput,
  type DetectLabelsCommandOutput,
  type RekognitionClient,
} from '@aws-sdk/client-rekognition';
import sharp from 'sharp';
import { RejectedUpload } from './errors';
import { REKOGNITION_LIMITS as REKOGNITION } from '../ids';
import { isCatAt, type CatInstance, type Label, type TrimmedLabels } from '../store/model';
import { LIMITS } from '../store/schema';

export interface ImageFacts {
  bucket: string;
  key: string;
  bytes: number;
  format: string;
  width: number;
  height: number;
}

export interface DetectOptions {
  minConfidence: number;
  maxLabels: number;
}

/** By S3Object reference when Rekognition can read the stored object as it is; otherwise Bytes converted by sharp. */
export const canSendByReference = (img: ImageFacts): boolean =>
  REKOGNITION.byReference.has(img.format) &&
  img.bytes <= REKOGNITION.maxS3Bytes &&
  Math.max(img.width, img.height) <= REKOGNITION.maxSide;

export function buildDetectRequest(
  image: { s3: { bucket: string; key: string } } | { bytes: Uint8Array },
  opts: DetectOptions,
): DetectLabelsCommandInput {
  return {
    Image: 's3' in image ? { S3Object: { Bucket: image.s3.bucket, Name: image.s3.key } } : { Bytes: image.bytes },
    MaxLabels: opts.maxLabels,
    MinConfidence: opts.minConfidence,
  };
}

/**
 * JPEG within Rekognition's limits: at most 10,000 px a side (4,096 is plenty to find a cat) and 5 MB,
 * auto-oriented so the detector sees the picture upright.
 */
export async function toRekognitionJpeg(image: Buffer, maxInputPixels: number): Promise<Buffer> {
  for (const [side, quality] of [[4096, 85], [2048, 80], [1024, 75]] as const) {
    const jpeg = await sharp(image, { limitInputPixels: maxInputPixels })
      .autoOrient()
      .resize(side, side, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality })
      .toBuffer();
    if (jpeg.length <= REKOGNITION.maxBytes) return jpeg;
  }
  throw new RejectedUpload('DetectionRejected', 'the image could not be reduced below Rekognition\'s 5 MB limit');
}

export interface Detection {
  isCat: boolean;
  /** The best Cat confidence, label or instance; 0 when no Cat was found. */
  catConfidence: number;
  cats: CatInstance[];
  labels: Label[];
  trimmed: TrimmedLabels;
  /** How the image was sent, for the debug log. */
  sentAs: 'S3Object' | 'Bytes';
}

/**
 * DetectLabels, by reference when possible. Throttling is retried by the client's own jittered exponential backoff
 * (see createRekognitionClient); an image Rekognition refuses by reference is sent once more as converted Bytes;
 * a refusal of the converted bytes is the upload's fault.
 */
export async function detectLabels(
  rekognition: RekognitionClient,
  img: ImageFacts,
  loadImage: () => Buffer,
  opts: DetectOptions & { catMinConfidence: number; maxInputPixels: number },
): Promise<Detection> {
  let sentAs: Detection['sentAs'] = 'S3Object';
  let out: DetectLabelsCommandOutput | undefined;
  if (canSendByReference(img)) {
    try {
      out = await rekognition.send(new DetectLabelsCommand(buildDetectRequest({ s3: img }, opts)));
    } catch (err) {
      if (!isImageRefusal(err)) throw err;
    }
  }
  if (!out) {
    sentAs = 'Bytes';
    const bytes = await toRekognitionJpeg(loadImage(), opts.maxInputPixels);
    try {
      out = await rekognition.send(new DetectLabelsCommand(buildDetectRequest({ bytes }, opts)));
    } catch (err) {
      if (isImageRefusal(err)) {
        throw new RejectedUpload('DetectionRejected', `Rekognition refused the image: ${(err as Error).name}`, { cause: err });
      }
      throw err;
    }
  }
  return { ...interpretLabels(out, opts.catMinConfidence), sentAs };
}

function isImageRefusal(err: unknown): boolean {
  return (
    err instanceof InvalidImageFormatException ||
    err instanceof ImageTooLargeException ||
    err instanceof InvalidParameterException ||
    err instanceof InvalidS3ObjectException
  );
}

/**
 * Keeps names, confidences, parents and instance counts, and the Cat instances with their boxes (so the cat threshold
 * can move later without another call); drops everything else.
 */
export function interpretLabels(
  out: Pick<DetectLabelsCommandOutput, 'Labels' | 'LabelModelVersion'>,
  catMinConfidence: number,
): Omit<Detection, 'sentAs'> {
  const all = (out.Labels ?? [])
    .filter((l) => l.Name)
    .map((l) => ({
      name: l.Name!,
      confidence: round2(l.Confidence ?? 0),
      parents: (l.Parents ?? []).map((p) => p.Name ?? '').filter(Boolean),
      instances: l.Instances?.length ?? 0,
    }))
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, LIMITS.labels);
  const catLabel = (out.Labels ?? []).find((l) => l.Name === 'Cat');
  const cats: CatInstance[] = (catLabel?.Instances ?? [])
    .filter((i) => i.BoundingBox)
    .map((i) => ({
      confidence: round2(i.Confidence ?? 0),
      box: {
        left: round4(i.BoundingBox!.Left ?? 0),
        top: round4(i.BoundingBox!.Top ?? 0),
        width: round4(i.BoundingBox!.Width ?? 0),
        height: round4(i.BoundingBox!.Height ?? 0),
      },
    }))
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, LIMITS.cats);
  const catConfidence = Math.max(0, catLabel ? round2(catLabel.Confidence ?? 0) : 0, ...cats.map((c) => c.confidence));
  return {
    isCat: isCatAt(catConfidence, catMinConfidence),
    catConfidence,
    cats,
    labels: all.map(({ name, confidence }) => ({ name, confidence })),
    trimmed: { model: out.LabelModelVersion ?? 'unknown', labels: all },
  };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const round4 = (n: number): number => Math.round(n * 1e4) / 1e4;
