// A local Amazon Rekognition endpoint answering DetectLabels over Rekognition's JSON protocol (POST /,
// X-Amz-Target: RekognitionService.DetectLabels, application/x-amz-json-1.1), so the stock
// @aws-sdk/client-rekognition works against it unchanged. Requests are not signature-checked.
// Test hooks beside the API: GET /__stats (call counters), GET|POST /__faults (throttling, latency),
// GET /__health. Decoding and inference run in a pool of workers (pool.ts), never on the thread that serves HTTP.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import sharp, { type Metadata } from 'sharp';
import { z } from 'zod';
import { DetectorPool, detectorWorkers, type WorkerFault } from './pool';
import { toLabels, type Label } from './labels';
import {
  DetectorError,
  ImageTooLargeError,
  InvalidImageFormatError,
  DetectorParameterError,
  InvalidS3ObjectError,
  ThrottlingError,
  ThroughputExceededError,
} from './errors';
import { listen } from '../listen';
import { createS3Client } from '../../lib/aws/clients';
import { envNumber } from '../../lib/config';
import { ID_PATTERN, REKOGNITION_LIMITS } from '../../lib/ids';
import { tryParseUploadKey } from '../../lib/ingest/s3-key';
import { CLIENT_HINT_HEADER } from '../../lib/ingest/detect';

/** Rekognition's limits for DetectLabels. */
export const LIMITS = REKOGNITION_LIMITS;

/** Largest request body read; the base64 of a 5 MB image is ~7 MB, anything larger is refused as too large. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const TARGET_PREFIX = 'RekognitionService.';
const JSON_11 = 'application/x-amz-json-1.1';

export interface DetectorServerOptions {
  host?: string;
  /** 0 or omitted: a free port (see the returned `port`). */
  port?: number;
  /** Fraction 0..1 of DetectLabels calls answered with ThrottlingException (env ICECAT_DETECTOR_THROTTLE_RATE). */
  throttleRate?: number;
  /** Milliseconds added before every DetectLabels answer (env ICECAT_DETECTOR_LATENCY_MS). */
  latencyMs?: number;
  /** Reads Image.S3Object; by default a client for AWS_ENDPOINT_URL_S3 (path-style when S3_FORCE_PATH_STYLE=true). */
  s3?: S3Client;
  /**
   * DetectLabels calls in progress at most (each holds its image in memory); more are refused with
   * ProvisionedThroughputExceededException, as Rekognition refuses calls beyond its rate. Default 64, or 8 per
   * worker when that is more.
   */
  maxPending?: number;
  /** Workers running the model, 1..64 (env ICECAT_DETECTOR_WORKERS; default one per available core). */
  workers?: number;
  /** Milliseconds one image may hold a worker before the worker counts as hung and is replaced (env ICECAT_DETECTOR_TASK_TIMEOUT_MS; default 60 s). */
  taskTimeoutMs?: number;
}

export interface DetectorServer {
  url: string;
  port: number;
  /** Workers in its pool. */
  workers: number;
  close(): Promise<void>;
}

/** Run-time fault injection; POST /__faults changes it, GET /__faults shows it. */
export interface Faults {
  throttleRate: number;
  latencyMs: number;
  /** The next N DetectLabels calls are throttled whatever the rate (deterministic tests). */
  throttleNext: number;
  /** Test hooks: the worker given each of the next N images exits (crash) or spins for ever (hang) before answering. */
  crashNext: number;
  hangNext: number;
}

export interface DetectorStats {
  /** DetectLabels calls received, throttled ones included. */
  detectLabels: number;
  throttled: number;
  succeeded: number;
  /** Answered with an error other than injected throttling, by `__type`. */
  errors: Record<string, number>;
  pending: number;
  /** Live tensors summed over the workers. */
  tensors: number;
  model: string;
  workers: number;
  /** Workers replaced after dying or hanging, and images given to another worker then. */
  workersReplaced: number;
  imagesRetried: number;
  /** Worker milliseconds per client, halving every 5 s (the pool's fair share; images naming no client left out). */
  recentWorkerMs: Record<string, number>;
}

const FaultsPatch = z
  .object({
    throttleRate: z.number().min(0).max(1),
    latencyMs: z.number().int().min(0).max(600_000),
    throttleNext: z.number().int().min(0),
    crashNext: z.number().int().min(0),
    hangNext: z.number().int().min(0),
  })
  .partial()
  .strict();

// Rekognition's request constraints (API reference, DetectLabels and GeneralLabelsSettings).
const FilterList = z.array(z.string().max(50)).max(100);
const DetectLabelsRequest = z.object({
  Image: z
    .object({
      Bytes: z.string().optional(),
      S3Object: z
        .object({
          Bucket: z.string().min(3).max(255).regex(/^[0-9A-Za-z.\-_]*$/),
          Name: z.string().min(1).max(1024),
          Version: z.string().min(1).max(1024).optional(),
        })
        .optional(),
    })
    .refine((img) => (img.Bytes === undefined) !== (img.S3Object === undefined), {
      message: 'exactly one of Image.Bytes and Image.S3Object',
    }),
  MaxLabels: z.number().int().min(0).optional(),
  MinConfidence: z.number().min(0).max(100).optional(),
  Features: z.array(z.enum(['GENERAL_LABELS', 'IMAGE_PROPERTIES'])).max(2).optional(),
  Settings: z
    .object({
      GeneralLabels: z
        .object({
          LabelInclusionFilters: FilterList.optional(),
          LabelExclusionFilters: FilterList.optional(),
          LabelCategoryInclusionFilters: FilterList.optional(),
          LabelCategoryExclusionFilters: FilterList.optional(),
        })
        .optional(),
      ImageProperties: z.object({ MaxDominantColors: z.number().int().min(0).max(12).optional() }).optional(),
    })
    .optional(),
});
type DetectLabelsRequest = z.infer<typeof DetectLabelsRequest>;


/** The body, or null when it exceeds `limit` (the rest is still read so the client sees the answer). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size <= limit ? Buffer.concat(chunks) : null;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function isJpeg(b: Buffer): boolean {
  return b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}
function isPng(b: Buffer): boolean {
  return b.length > 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

/** Checks what Rekognition checks before looking at an image: format, then size in pixels. */
async function checkImage(image: Buffer): Promise<void> {
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

async function readS3Image(s3: S3Client, ref: { Bucket: string; Name: string; Version?: string }): Promise<Buffer> {
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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': headers['content-type'] ?? 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendAwsError(res: ServerResponse, err: DetectorError, requestId: string): void {
  sendJson(
    res,
    err.status,
    { __type: err.type, Code: err.type, Logref: requestId, Message: err.message },
    { 'content-type': JSON_11, 'x-amzn-requestid': requestId, 'x-amzn-errortype': err.type },
  );
}

function toInvalidParameter(error: z.ZodError): DetectorParameterError {
  const detail = error.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`).join('; ');
  return new DetectorParameterError(`Request has invalid parameters (${detail})`);
}

/** The request, checked; its body's text and the parsed JSON are garbage once this returns. */
function parseRequest(body: Buffer): DetectLabelsRequest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    throw new DetectorError('Request body is not valid JSON', { type: 'SerializationException' });
  }
  const parsed = DetectLabelsRequest.safeParse(json);
  if (!parsed.success) throw toInvalidParameter(parsed.error);
  return parsed.data;
}

/** Starts the endpoint once the model is loaded; each server keeps its own faults and counters. */
export async function startDetectorServer(opts: DetectorServerOptions = {}): Promise<DetectorServer> {
  const faults: Faults = {
    throttleRate: opts.throttleRate ?? envNumber('ICECAT_DETECTOR_THROTTLE_RATE', 0, { min: 0, max: 1 }),
    latencyMs: opts.latencyMs ?? envNumber('ICECAT_DETECTOR_LATENCY_MS', 0, { min: 0, max: 600_000 }),
    throttleNext: 0,
    crashNext: 0,
    hangNext: 0,
  };
  FaultsPatch.parse({ throttleRate: faults.throttleRate, latencyMs: faults.latencyMs });
  const workers = detectorWorkers(opts.workers);
  const detector = await DetectorPool.start({ workers, taskTimeoutMs: opts.taskTimeoutMs });
  const maxPending = opts.maxPending ?? Math.max(64, 8 * workers);
  let inFlight = 0;
  let s3 = opts.s3;
  const counters = { detectLabels: 0, throttled: 0, succeeded: 0, errors: {} as Record<string, number> };

  const stats = (): DetectorStats => {
    const pool = detector.stats();
    return {
      ...counters,
      errors: { ...counters.errors },
      pending: inFlight,
      tensors: pool.tensors,
      model: detector.version,
      workers: pool.workers,
      workersReplaced: pool.replaced,
      imagesRetried: pool.retried,
      recentWorkerMs: pool.recentWorkerMs,
    };
  };

  /** The test hook for the next image, if any (POST /__faults crashNext / hangNext). */
  function nextWorkerFault(): WorkerFault | undefined {
    if (faults.crashNext > 0) {
      faults.crashNext -= 1;
      return 'crash';
    }
    if (faults.hangNext > 0) {
      faults.hangNext -= 1;
      return 'hang';
    }
    return undefined;
  }

  async function detectLabels(body: Buffer | null, clientHint?: string): Promise<{ Labels: Label[]; LabelModelVersion: string }> {
    counters.detectLabels += 1;
    if (inFlight >= maxPending) throw new ThroughputExceededError();
    inFlight += 1;
    try {
      return await detectLabelsWithin(body, clientHint);
    } finally {
      inFlight -= 1;
    }
  }

  async function detectLabelsWithin(body: Buffer | null, clientHint?: string): Promise<{ Labels: Label[]; LabelModelVersion: string }> {
    if (faults.latencyMs > 0) await sleep(faults.latencyMs);
    if (faults.throttleNext > 0 || (faults.throttleRate > 0 && Math.random() < faults.throttleRate)) {
      faults.throttleNext = Math.max(0, faults.throttleNext - 1);
      counters.throttled += 1;
      throw new ThrottlingError();
    }
    // Only Image.Bytes can make a body this large.
    if (body === null) throw new ImageTooLargeError();
    const request = parseRequest(body);

    let image: Buffer;
    // The uploading client (the pool's fair share, docs/design.md §11): the ingest's hint header with Bytes, else the
    // client of the S3Object's upload key.
    let clientId: string | undefined = clientHint;
    if (request.Image.Bytes !== undefined) {
      image = Buffer.from(request.Image.Bytes, 'base64');
      // The base64 text (a third larger than the image) is not kept while the image waits for a worker: a string
      // living that long is copied by every young collection and then moved to the old generation (docs/design.md §9).
      delete request.Image.Bytes;
      if (image.length === 0) throw new DetectorParameterError('Request has invalid parameters (Image.Bytes is empty)');
      if (image.length > LIMITS.maxBytes) throw new ImageTooLargeError();
    } else {
      s3 ??= createS3Client();
      image = await readS3Image(s3, request.Image.S3Object as { Bucket: string; Name: string; Version?: string });
      clientId ??= tryParseUploadKey(request.Image.S3Object?.Name ?? '')?.clientId;
    }
    await checkImage(image);

    const wantsLabels = request.Features === undefined || request.Features.includes('GENERAL_LABELS');
    let labels: Label[] = [];
    if (wantsLabels) {
      const detections = await detector.detect(image, nextWorkerFault(), clientId);
      labels = toLabels(detections, {
        minConfidence: request.MinConfidence ?? LIMITS.defaultMinConfidence,
        maxLabels: request.MaxLabels ?? LIMITS.defaultMaxLabels,
        filters: request.Settings?.GeneralLabels,
      });
    }
    counters.succeeded += 1;
    return { Labels: labels, LabelModelVersion: detector.version };
  }

  async function handleAws(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const body = await readBody(req, MAX_BODY_BYTES);
    const target = String(req.headers['x-amz-target'] ?? '');
    try {
      if (target !== `${TARGET_PREFIX}DetectLabels`) {
        throw new DetectorError(`The local detector answers DetectLabels only, not "${target}"`, { type: 'UnknownOperationException' });
      }
      const result = await detectLabels(body, clientHintOf(req));
      sendJson(res, 200, result, { 'content-type': JSON_11, 'x-amzn-requestid': requestId });
    } catch (err) {
      let error: DetectorError;
      if (err instanceof DetectorError) {
        error = err;
      } else {
        console.error('[detector] DetectLabels failed:', err);
        error = new DetectorError('Internal server error', { type: 'InternalServerError' });
      }
      if (!(error instanceof ThrottlingError)) counters.errors[error.type] = (counters.errors[error.type] ?? 0) + 1;
      sendAwsError(res, error, requestId);
    }
  }

  async function handleFaults(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'POST') {
      const body = await readBody(req, 64 * 1024);
      let patch;
      try {
        patch = FaultsPatch.parse(JSON.parse(body?.toString('utf8') || '{}'));
      } catch (err) {
        sendJson(res, 400, { message: `invalid faults: ${(err as Error).message}` });
        return;
      }
      Object.assign(faults, patch);
    }
    sendJson(res, 200, faults);
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    let handled: Promise<void> | undefined;
    if (req.method === 'POST' && path === '/') handled = handleAws(req, res);
    else if (path === '/__faults' && (req.method === 'GET' || req.method === 'POST')) handled = handleFaults(req, res);
    else if (path === '/__stats' && req.method === 'GET') sendJson(res, 200, stats());
    else if (path === '/__stats' && req.method === 'DELETE') {
      Object.assign(counters, { detectLabels: 0, throttled: 0, succeeded: 0, errors: {} });
      sendJson(res, 200, stats());
    } else if (path === '/__health' && req.method === 'GET') sendJson(res, 200, { status: 'ok', model: detector.version });
    else sendJson(res, 404, { message: `no route for ${req.method} ${path}` });
    Promise.resolve(handled).catch((err: unknown) => {
      console.error('[detector] request failed:', err);
      if (!res.headersSent) sendJson(res, 500, { message: 'internal error' });
      else res.destroy();
    });
  });

  try {
    const listening = await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 0, { graceMs: 0 });
    return {
      ...listening,
      workers,
      close: async () => {
        try {
          await listening.close();
        } finally {
          await detector.close();
        }
      },
    };
  } catch (err) {
    await detector.close();
    throw err;
  }
}

/** The client named by the ingest's hint header (lib/ingest/detect.ts), when it is a client id. */
function clientHintOf(req: IncomingMessage): string | undefined {
  const value = req.headers[CLIENT_HINT_HEADER];
  return typeof value === 'string' && ID_PATTERN.test(value) ? value : undefined;
}
