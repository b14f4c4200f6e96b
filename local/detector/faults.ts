// Run-time fault injection (the test hooks GET|POST /__faults): throttling, latency, a worker crashing or hanging.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { sendJson } from './http';
import type { WorkerFault } from './pool';
import { readBody } from './request';

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

/** The faults a server starts with, as its settings say (ICECAT_DETECTOR_THROTTLE_RATE, _LATENCY_MS); checked. */
export function initialFaults(settings: { throttleRate: number; latencyMs: number }): Faults {
  const faults: Faults = {
    throttleRate: settings.throttleRate,
    latencyMs: settings.latencyMs,
    throttleNext: 0,
    crashNext: 0,
    hangNext: 0,
  };
  FaultsPatch.parse({ throttleRate: faults.throttleRate, latencyMs: faults.latencyMs });
  return faults;
}

/** The test hook for the next image, if any (POST /__faults crashNext / hangNext). */
export function nextWorkerFault(faults: Faults): WorkerFault | undefined {
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

/** GET /__faults shows them; POST /__faults changes those it names. */
export async function handleFaults(req: IncomingMessage, res: ServerResponse, faults: Faults): Promise<void> {
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
