// DetectLabels itself: the faults injected, the request checked, the image read and checked, the labels from the
// pool's workers; and the counters GET /__stats shows.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import { REKOGNITION_LIMITS as LIMITS } from '../../lib/ids';
import { tryParseUploadKey } from '../../lib/ingest/s3-key';
import { DetectorError, DetectorParameterError, ImageTooLargeError, ThrottlingError, ThroughputExceededError } from './errors';
import { type Faults, nextWorkerFault } from './faults';
import { JSON_11, sendAwsError, sendJson } from './http';
import { checkImage, readS3Image } from './image-check';
import type { FoundObject } from './labels';
import { type RekognitionLabel, toLabels } from './labels';
import { DetectionMemo } from './memo';
import type { DetectorPool, WorkerFault } from './pool';
import { type DetectLabelsRequest, parseRequest, readBody } from './request';
import { MODEL_SCALES, type ModelScale } from './scales';

/** Largest request body read; the base64 of a 5 MB image is ~7 MB, anything larger is refused as too large. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const TARGET_PREFIX = 'RekognitionService.';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
  /** Calls answered from the memo (memo.ts) without a worker. */
  memoHits: number;
  /** Worker milliseconds per client, halving every 5 s (the pool's fair share; images naming no client left out). */
  recentWorkerMs: Record<string, number>;
}

type DetectLabelsAnswer = { Labels: RekognitionLabel[]; LabelModelVersion: string };

/** One server's DetectLabels: its pool, its faults, at most `maxPending` calls in progress, and its counters. */
export class DetectLabelsEndpoint {
  private inFlight = 0;
  private counters = { detectLabels: 0, throttled: 0, succeeded: 0, errors: {} as Record<string, number> };

  constructor(
    private readonly detector: DetectorPool,
    private readonly faults: Faults,
    private readonly maxPending: number,
    /** Reads Image.S3Object. */
    private readonly s3: S3Client,
    /** The pool's model's mapping onto Rekognition's scale. */
    private readonly scale: ModelScale = MODEL_SCALES[detector.model],
    /** Answers kept by image (memo.ts); none when not given. */
    private readonly memo?: DetectionMemo,
  ) {}

  /** The model's version, as the workers report it. */
  get model(): string {
    return this.detector.version;
  }

  stats(): DetectorStats {
    const pool = this.detector.stats();
    return {
      ...this.counters,
      errors: { ...this.counters.errors },
      pending: this.inFlight,
      tensors: pool.tensors,
      model: this.detector.version,
      workers: pool.workers,
      workersReplaced: pool.replaced,
      imagesRetried: pool.retried,
      memoHits: this.memo?.hits ?? 0,
      recentWorkerMs: pool.recentWorkerMs,
    };
  }

  /** DELETE /__stats: the counters from zero. */
  resetCounters(): void {
    Object.assign(this.counters, { detectLabels: 0, throttled: 0, succeeded: 0, errors: {} });
  }

  /** POST / with X-Amz-Target RekognitionService.DetectLabels: the labels, or the AWS error Rekognition would give. */
  async answer(req: IncomingMessage, res: ServerResponse, clientHint: string | undefined): Promise<void> {
    const requestId = randomUUID();
    const body = await readBody(req, MAX_BODY_BYTES);
    const target = String(req.headers['x-amz-target'] ?? '');
    try {
      if (target !== `${TARGET_PREFIX}DetectLabels`) {
        throw new DetectorError(`The local detector answers DetectLabels only, not "${target}"`, { type: 'UnknownOperationException' });
      }
      const result = await this.detectLabels(body, clientHint);
      sendJson(res, 200, result, { 'content-type': JSON_11, 'x-amzn-requestid': requestId });
    } catch (err) {
      let error: DetectorError;
      if (err instanceof DetectorError) {
        error = err;
      } else {
        console.error('[detector] DetectLabels failed:', err);
        error = new DetectorError('Internal server error', { type: 'InternalServerError' });
      }
      if (!(error instanceof ThrottlingError)) this.counters.errors[error.type] = (this.counters.errors[error.type] ?? 0) + 1;
      sendAwsError(res, error, requestId);
    }
  }

  private async detectLabels(body: Buffer | null, clientHint?: string): Promise<DetectLabelsAnswer> {
    this.counters.detectLabels += 1;
    if (this.inFlight >= this.maxPending) throw new ThroughputExceededError();
    this.inFlight += 1;
    try {
      return await this.detectLabelsWithin(body, clientHint);
    } finally {
      this.inFlight -= 1;
    }
  }

  private async detectLabelsWithin(body: Buffer | null, clientHint?: string): Promise<DetectLabelsAnswer> {
    const faults = this.faults;
    if (faults.latencyMs > 0) await sleep(faults.latencyMs);
    if (faults.throttleNext > 0 || (faults.throttleRate > 0 && Math.random() < faults.throttleRate)) {
      faults.throttleNext = Math.max(0, faults.throttleNext - 1);
      this.counters.throttled += 1;
      throw new ThrottlingError();
    }
    // Only Image.Bytes can make a body this large.
    if (body === null) throw new ImageTooLargeError();
    const request = parseRequest(body);
    const { image, clientId } = await this.imageOf(request, clientHint);
    await checkImage(image);

    const wantsLabels = request.Features === undefined || request.Features.includes('GENERAL_LABELS');
    let labels: RekognitionLabel[] = [];
    if (wantsLabels) {
      const detections = await this.detections(image, nextWorkerFault(faults), clientId);
      labels = toLabels(
        detections,
        {
          minConfidence: request.MinConfidence ?? LIMITS.defaultMinConfidence,
          maxLabels: request.MaxLabels ?? LIMITS.defaultMaxLabels,
          filters: request.Settings?.GeneralLabels,
        },
        this.scale,
      );
    }
    this.counters.succeeded += 1;
    return { Labels: labels, LabelModelVersion: this.detector.version };
  }

  /** The model's objects in the image: remembered ones when the memo has them (and no worker fault is asked for). */
  private async detections(image: Buffer, fault: WorkerFault | undefined, clientId: string | undefined): Promise<readonly FoundObject[]> {
    if (!this.memo || fault !== undefined) return this.detector.detect(image, fault, clientId);
    const key = DetectionMemo.key(image, this.detector.version);
    const known = this.memo.get(key);
    if (known) return known;
    const found = await this.detector.detect(image, fault, clientId);
    this.memo.set(key, found);
    return found;
  }

  /**
   * The image the request names, and the uploading client (the pool's fair share, docs/design.md §11): the ingest's
   * hint header with Bytes, else the client of the S3Object's upload key.
   */
  private async imageOf(
    request: DetectLabelsRequest,
    clientHint: string | undefined,
  ): Promise<{ image: Buffer; clientId: string | undefined }> {
    if (request.Image.Bytes !== undefined) {
      const image = Buffer.from(request.Image.Bytes, 'base64');
      // The base64 text (a third larger than the image) is not kept while the image waits for a worker: a string
      // living that long is copied by every young collection and then moved to the old generation (docs/design.md §9).
      delete request.Image.Bytes;
      if (image.length === 0) throw new DetectorParameterError('Request has invalid parameters (Image.Bytes is empty)');
      if (image.length > LIMITS.maxBytes) throw new ImageTooLargeError();
      return { image, clientId: clientHint };
    }
    const image = await readS3Image(this.s3, request.Image.S3Object as { Bucket: string; Name: string; Version?: string });
    return { image, clientId: clientHint ?? tryParseUploadKey(request.Image.S3Object?.Name ?? '')?.clientId };
  }
}
