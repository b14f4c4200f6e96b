import {
  DetectLabelsCommand,
  type DetectLabelsCommandInput,
  type DetectLabelsCommandOutput,
  ImageTooLargeException,
  type Instance,
  InvalidImageFormatException,
  InvalidParameterException,
  type RekognitionClient,
} from '@aws-sdk/client-rekognition';
import sharp from 'sharp';
import { type CatInstance, type Detections, type Label, type ModelVersion, type TrimmedLabels } from '../domain/detection';
import { isCatAt } from '../domain/image';
import { REKOGNITION_LIMITS as REKOGNITION } from '../ids';
import { parseModelVersion } from '../model-version';
import { LIMITS } from '../store/table/schema';
import { RejectedUploadError } from './errors';

interface ImageFacts {
  /** Length of the bytes read. */
  bytes: number;
  format: string;
  width: number;
  height: number;
}

/** Pixels already decoded (a HEIF photo's, which sharp cannot decode itself), upright. */
interface RawPixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

interface DetectOptions {
  minConfidence: number;
  maxLabels: number;
}

/**
 * Whether Rekognition takes the bytes read as they are (Image.Bytes): a JPEG or PNG within its 5 MB and 10,000 px.
 * Anything else is converted by sharp. Never by S3Object: Rekognition would read the key again, and a newer upload
 * landed there meanwhile would lend the record its labels (docs/design.md §1 step 5).
 */
export const canSendAsIs = (img: ImageFacts): boolean =>
  REKOGNITION.byReference.has(img.format) && img.bytes <= REKOGNITION.maxBytes && Math.max(img.width, img.height) <= REKOGNITION.maxSide;

/**
 * The header naming the uploading client on a DetectLabels request, sent only where REKOGNITION_CLIENT_HINT is on (the
 * local stack): the local detector's worker pool orders waiting images by client (docs/design.md §11), and an image sent
 * as Bytes names no key to read the client from. Rekognition itself has no such field and is never sent it.
 */
export const CLIENT_HINT_HEADER = 'x-icecat-client';

/** The command, carrying the client hint header when a client is given. */
export function detectCommand(input: DetectLabelsCommandInput, clientHint?: string): DetectLabelsCommand {
  const command = new DetectLabelsCommand(input);
  if (clientHint !== undefined) {
    command.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) request.headers[CLIENT_HINT_HEADER] = clientHint;
        return next(args);
      },
      { step: 'build', name: 'icecatClientHint' },
    );
  }
  return command;
}

export function buildDetectRequest(bytes: Uint8Array, opts: DetectOptions): DetectLabelsCommandInput {
  return { Image: { Bytes: bytes }, MaxLabels: opts.maxLabels, MinConfidence: opts.minConfidence };
}

/**
 * JPEG within Rekognition's limits: at most 10,000 px a side (4,096 is plenty to find a cat) and 5 MB,
 * auto-oriented so the detector sees the picture upright.
 */
export async function toRekognitionJpeg(image: Buffer | RawPixels, maxInputPixels: number): Promise<Buffer> {
  for (const [side, quality] of [
    [4096, 85],
    [2048, 80],
    [1024, 75],
  ] as const) {
    const input = Buffer.isBuffer(image)
      ? sharp(image, { limitInputPixels: maxInputPixels }).autoOrient()
      : sharp(image.data, {
          limitInputPixels: maxInputPixels,
          raw: { width: image.width, height: image.height, channels: image.channels },
        });
    const jpeg = await input
      .resize(side, side, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality })
      .toBuffer();
    if (jpeg.length <= REKOGNITION.maxBytes) return jpeg;
  }
  throw new RejectedUploadError("the image could not be reduced below Rekognition's 5 MB limit", { code: 'DetectionRejected' });
}

interface DetectOutcome {
  /** The model and the boxes of the labels other than Cat (the most confident LIMITS.otherBoxes). */
  detections: Detections;
  isCat: boolean;
  /** The best Cat confidence, label or instance; 0 when no Cat was found. */
  catConfidence: number;
  cats: CatInstance[];
  labels: Label[];
  trimmed: TrimmedLabels;
  /** The model that answered: LabelModelVersion as {name, version} (lib/model-version.ts). */
  model: ModelVersion;
  /** How the image was sent, for the debug log: the bytes read, or sharp's JPEG of them. */
  sentAs: 'Bytes' | 'converted Bytes';
}

/**
 * DetectLabels on the very bytes the ingest read: as they are when Rekognition takes them, else converted by sharp.
 * Throttling is retried by the client's own jittered exponential backoff (see createRekognitionClient); an image
 * Rekognition refuses as it is is sent once more converted; a refusal of the converted bytes is the upload's fault.
 */
export async function detectLabels(
  rekognition: RekognitionClient,
  img: ImageFacts,
  bytes: Buffer,
  opts: DetectOptions & {
    catMinConfidence: number;
    maxInputPixels: number;
    clientHint?: string;
    onRequest?: DetectLabelsObserver;
    /** The JPEG to send when the bytes cannot go as they are, where sharp cannot convert them (Fingerprint.rekognitionJpeg). */
    convert?: () => Promise<Buffer>;
  },
): Promise<DetectOutcome> {
  const send = (jpegOrBytes: Buffer) =>
    observed(opts.onRequest, () => rekognition.send(detectCommand(buildDetectRequest(jpegOrBytes, opts), opts.clientHint)));
  let sentAs: DetectOutcome['sentAs'] = 'Bytes';
  let out: DetectLabelsCommandOutput | undefined;
  if (canSendAsIs(img)) {
    try {
      out = await send(bytes);
    } catch (err) {
      if (!isImageRefusal(err)) throw err;
    }
  }
  if (!out) {
    sentAs = 'converted Bytes';
    const jpeg = await (opts.convert ? opts.convert() : toRekognitionJpeg(bytes, opts.maxInputPixels));
    try {
      out = await send(jpeg);
    } catch (err) {
      if (isImageRefusal(err)) {
        throw new RejectedUploadError(`Rekognition refused the image: ${(err as Error).name}`, { code: 'DetectionRejected', cause: err });
      }
      throw err;
    }
  }
  return { ...interpretLabels(out, opts.catMinConfidence), sentAs };
}

/** How one DetectLabels request ended (after the client's own retries): the ingest's DetectLabelsRequests metric. */
export type DetectLabelsOutcome = 'ok' | 'throttled' | 'refused' | 'failed';

/** Told of each DetectLabels request: how it ended and its wall time in ms, retries included. */
export type DetectLabelsObserver = (outcome: DetectLabelsOutcome, ms: number) => void;

const THROTTLES = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'LimitExceededException']);

/** A refusal of the image is the upload's; a throttle outlasting the retries is the quota's; the rest are faults. */
function detectLabelsOutcome(err: unknown): Exclude<DetectLabelsOutcome, 'ok'> {
  if (isImageRefusal(err)) return 'refused';
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (THROTTLES.has(e?.name ?? '') || e?.$metadata?.httpStatusCode === 429) return 'throttled';
  return 'failed';
}

async function observed<T>(observer: DetectLabelsObserver | undefined, request: () => Promise<T>): Promise<T> {
  if (!observer) return request();
  const start = performance.now();
  try {
    const out = await request();
    observer('ok', performance.now() - start);
    return out;
  } catch (err) {
    observer(detectLabelsOutcome(err), performance.now() - start);
    throw err;
  }
}

function isImageRefusal(err: unknown): boolean {
  return err instanceof InvalidImageFormatException || err instanceof ImageTooLargeException || err instanceof InvalidParameterException;
}

/**
 * Keeps names, confidences, parents and instance counts, and the Cat instances with their boxes (so the cat threshold
 * can move later without another call); drops everything else.
 */
export function interpretLabels(
  out: Pick<DetectLabelsCommandOutput, 'Labels' | 'LabelModelVersion'>,
  catMinConfidence: number,
): Omit<DetectOutcome, 'sentAs'> {
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
  const cats: CatInstance[] = boxesOf(catLabel?.Instances).slice(0, LIMITS.cats);
  const boxes = (out.Labels ?? [])
    .filter((l) => l.Name && l.Name !== 'Cat')
    .flatMap((l) => boxesOf(l.Instances).map((b) => ({ name: l.Name!, ...b })))
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, LIMITS.otherBoxes);
  const catConfidence = Math.max(0, catLabel ? round2(catLabel.Confidence ?? 0) : 0, ...cats.map((c) => c.confidence));
  return {
    isCat: isCatAt(catConfidence, catMinConfidence),
    catConfidence,
    cats,
    labels: all.map(({ name, confidence }) => ({ name, confidence })),
    trimmed: { model: out.LabelModelVersion ?? 'unknown', labels: all },
    detections: { model: out.LabelModelVersion ?? 'unknown', boxes },
    model: parseModelVersion(out.LabelModelVersion),
  };
}

/** A label's instances with a box, most confident first, confidences and box sides rounded. */
function boxesOf(instances: Instance[] | undefined): CatInstance[] {
  return (instances ?? [])
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
    .sort((a, b) => b.confidence - a.confidence);
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const round4 = (n: number): number => Math.round(n * 1e4) / 1e4;
