// The detector's settings as one object, read once where a detector is started (npm start's stack, `npm run
// detector`: from-environment.ts; a test or a bench) and handed down to the server, its pool and each worker: nothing
// below reads the environment. What the environment says comes in raw (local/config.ts detectorEnvironment) and is
// checked here, fail-fast, with any override its starter gives.
import { availableParallelism } from 'node:os';
import { ConfigError } from '../../lib/config';
import { type DetectorModelName, detectorModelName, modelCacheDir } from './model-catalog';

/** Most workers a pool runs. */
export const MAX_DETECTOR_WORKERS = 64;

/** Workers by default: one per core this process may use. */
export const defaultDetectorWorkers = (): number => Math.min(MAX_DETECTOR_WORKERS, availableParallelism());

/** The detector's configuration as the environment gives it (local/config.ts detectorEnvironment reads it). */
export interface DetectorEnvironment {
  /** ICECAT_DETECTOR_MODEL as set. */
  model?: string;
  /** ICECAT_MODEL_CACHE and XDG_CACHE_HOME as set. */
  modelCache: { cache?: string; xdgCache?: string };
  /** ICECAT_DETECTOR_WORKERS, else one per core. */
  workers: number;
  /** ICECAT_DETECTOR_TASK_TIMEOUT_MS, else 60 s. */
  taskTimeoutMs: number;
  /** ICECAT_DETECTOR_THROTTLE_RATE and ICECAT_DETECTOR_LATENCY_MS: the faults it starts with. */
  throttleRate: number;
  latencyMs: number;
}

export interface DetectorSettings {
  model: DetectorModelName;
  /** Where fetched model files live (NanoDet's; model-catalog.ts). */
  modelCache: string;
  workers: number;
  /** Milliseconds one image may hold a worker before the worker counts as hung and is replaced. */
  taskTimeoutMs: number;
  throttleRate: number;
  latencyMs: number;
}

/** A worker count as given: an integer in 1..64, anything else refused. */
export function detectorWorkers(workers: number): number {
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_DETECTOR_WORKERS) {
    throw new ConfigError(`the detector's workers must be an integer in 1..${MAX_DETECTOR_WORKERS}, got ${workers}`);
  }
  return workers;
}

/** The settings from what the environment says, with the starter's overrides on top, each checked. */
export function detectorSettings(
  env: DetectorEnvironment,
  overrides: Partial<Omit<DetectorSettings, 'modelCache'>> = {},
): DetectorSettings {
  return {
    model: overrides.model ?? detectorModelName(env.model),
    modelCache: modelCacheDir(env.modelCache),
    workers: detectorWorkers(overrides.workers ?? env.workers),
    taskTimeoutMs: overrides.taskTimeoutMs ?? env.taskTimeoutMs,
    throttleRate: overrides.throttleRate ?? env.throttleRate,
    latencyMs: overrides.latencyMs ?? env.latencyMs,
  };
}
