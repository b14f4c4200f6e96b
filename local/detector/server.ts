// A local Amazon Rekognition endpoint answering DetectLabels over Rekognition's JSON protocol (POST /,
// X-Amz-Target: RekognitionService.DetectLabels, application/x-amz-json-1.1), so the stock
// @aws-sdk/client-rekognition works against it unchanged. Requests are not signature-checked.
// Test hooks beside the API: GET /__stats (call counters), GET|POST /__faults (throttling, latency),
// GET /__health. Decoding and inference run in a pool of workers (pool.ts), never on the thread that serves HTTP.
// The parts: the request (request.ts), the image checks (image-check.ts), DetectLabels and its counters
// (detect-labels.ts), the fault injection (faults.ts), the answers (http.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import { ID_PATTERN } from '../../lib/ids';
import { CLIENT_HINT_HEADER } from '../../lib/ingest/detect';
import { listen } from '../listen';
import { DetectLabelsEndpoint } from './detect-labels';
import { type Faults, handleFaults, initialFaults } from './faults';
import { JSON_11, sendJson } from './http';
import { DetectionMemo } from './memo';
import { locateModelFiles } from './model-catalog';
import { DetectorPool } from './pool';
import { MODEL_SCALES } from './scales';
import type { DetectorSettings } from './settings';

export interface DetectorServerOptions {
  host?: string;
  /** 0 or omitted: a free port (see the returned `port`). */
  port?: number;
  /** The model, the model cache, the workers, their task timeout and the faults it starts with (settings.ts). */
  settings: DetectorSettings;
  /** Reads Image.S3Object. */
  s3: S3Client;
  /**
   * DetectLabels calls in progress at most (each holds its image in memory); more are refused with
   * ProvisionedThroughputExceededException, as Rekognition refuses calls beyond its rate. Default 64, or 8 per
   * worker when that is more.
   */
  maxPending?: number;
  /**
   * IAM (local/iam/iam.ts): the message of Rekognition's AccessDeniedException when the caller's role does not allow
   * rekognition:DetectLabels, or undefined; read from the request's Authorization header.
   */
  authorize?: (authorization: string | undefined) => Promise<string | undefined>;
  /** Answers kept by image (memo.ts): how many; 0, the default, keeps none. */
  memoEntries?: number;
}

export interface DetectorServer {
  url: string;
  port: number;
  /** Workers in its pool. */
  workers: number;
  close(): Promise<void>;
}

/** Starts the endpoint once the model is loaded; each server keeps its own faults and counters. */
export async function startDetectorServer(opts: DetectorServerOptions): Promise<DetectorServer> {
  const { settings } = opts;
  const faults = initialFaults(settings);
  const { workers, model } = settings;
  // A model not installed (NanoDet before `npm run detector:models`) is refused here with the command, once.
  locateModelFiles(model, settings.modelCache);
  const detector = await DetectorPool.start({ workers, taskTimeoutMs: settings.taskTimeoutMs, model, modelCache: settings.modelCache });
  const memo = (opts.memoEntries ?? 0) > 0 ? new DetectionMemo(opts.memoEntries!) : undefined;
  const endpoint = new DetectLabelsEndpoint(
    detector,
    faults,
    opts.maxPending ?? Math.max(64, 8 * workers),
    opts.s3,
    MODEL_SCALES[model],
    memo,
  );
  const server = createServer((req, res) => route(req, res, endpoint, faults, opts.authorize));

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

/** DetectLabels at POST /, and the test hooks beside it: /__faults, /__stats, /__health. */
function route(req: IncomingMessage, res: ServerResponse, endpoint: DetectLabelsEndpoint, faults: Faults, authorize: Authorize): void {
  const path = (req.url ?? '/').split('?')[0];
  let handled: Promise<void> | undefined;
  if (req.method === 'POST' && path === '/') handled = authorized(req, res, authorize, () => endpoint.answer(req, res, clientHintOf(req)));
  else if (path === '/__faults' && (req.method === 'GET' || req.method === 'POST')) handled = handleFaults(req, res, faults);
  else if (path === '/__stats' && req.method === 'GET') sendJson(res, 200, endpoint.stats());
  else if (path === '/__stats' && req.method === 'DELETE') {
    endpoint.resetCounters();
    sendJson(res, 200, endpoint.stats());
  } else if (path === '/__health' && req.method === 'GET') sendJson(res, 200, { status: 'ok', model: endpoint.model });
  else sendJson(res, 404, { message: `no route for ${req.method} ${path}` });
  Promise.resolve(handled).catch((err: unknown) => {
    console.error('[detector] request failed:', err);
    if (!res.headersSent) sendJson(res, 500, { message: 'internal error' });
    else res.destroy();
  });
}

type Authorize = DetectorServerOptions['authorize'];

/** Runs `answer` once IAM allows the call; else Rekognition's AccessDeniedException (400), the body left unread. */
async function authorized(req: IncomingMessage, res: ServerResponse, authorize: Authorize, answer: () => Promise<void>): Promise<void> {
  const denied = authorize ? await authorize(req.headers.authorization) : undefined;
  if (denied === undefined) return answer();
  req.resume();
  sendJson(
    res,
    400,
    { __type: 'AccessDeniedException', Message: denied },
    { 'content-type': JSON_11, 'x-amzn-requestid': 'local', 'x-amzn-errortype': 'AccessDeniedException' },
  );
}

/** The client named by the ingest's hint header (lib/ingest/detect.ts), when it is a client id. */
function clientHintOf(req: IncomingMessage): string | undefined {
  const value = req.headers[CLIENT_HINT_HEADER];
  return typeof value === 'string' && ID_PATTERN.test(value) ? value : undefined;
}
