// The local stack's configuration: every setting `npm start`, its tools (dead-letters, client:create, the detector
// on its own) and the stack's stand-ins read, through lib/config.ts's fail-fast readers, once when they start. The
// one module of local/ that touches process.env: it reads the operator's settings, and it writes the environment the
// stack applies for the handlers it runs in-process (as Lambda would set it), putting back what was there at stop.
import path from 'node:path';
import { callbackGraceSeconds, clientLimitsCacheMs, defaultClientLimits, loadNotifyConfig } from '../functions/config';
import {
  type AwsClientSettings,
  envNumber,
  envString,
  type IngestConfig,
  loadAwsClientSettings,
  loadIngestConfig,
  pricePerImageUsd,
  redetectPaging,
} from '../lib/config';
import type { NotifyConfig } from '../lib/notify/schedule';
import type { ClientLimits } from '../lib/quota/limits';
import { LOCAL_NAMES, portsFromEnv, type StackPorts } from './contract';

/** The stack's ports: each ICECAT_*_PORT, else its default (local/contract.ts parses them, the one parse of each). */
export const localPorts = (): StackPorts => portsFromEnv(process.env);

/** The data dir `npm start` uses: ICECAT_DATA_DIR, else .data under the working directory. */
export const dataDirFromEnv = (): string => path.resolve(envString('ICECAT_DATA_DIR') ?? '.data');

/** The running stack's bridge (its dead letters, its status): ICECAT_BRIDGE_URL, else loopback on ICECAT_BRIDGE_PORT. */
export const bridgeUrl = (): string => envString('ICECAT_BRIDGE_URL') ?? `http://${LOCAL_NAMES.host}:${localPorts().bridge}`;

/** Where fetched model files live: ICECAT_MODEL_CACHE, else the user's cache folder (XDG_CACHE_HOME or ~/.cache). */
export const modelCacheSetting = (): { cache?: string; xdgCache?: string } => ({
  cache: envString('ICECAT_MODEL_CACHE'),
  xdgCache: envString('XDG_CACHE_HOME'),
});

/**
 * The local detector's configuration as the environment gives it (local/detector/settings.ts checks it and hands it
 * down): ICECAT_DETECTOR_MODEL as set, the model cache, ICECAT_DETECTOR_WORKERS (1..max, else `defaultWorkers`),
 * ICECAT_DETECTOR_TASK_TIMEOUT_MS (60 s) and the faults it starts with (ICECAT_DETECTOR_THROTTLE_RATE, _LATENCY_MS).
 */
export const detectorEnvironment = (defaultWorkers: number, maxWorkers: number) => ({
  model: envString('ICECAT_DETECTOR_MODEL'),
  modelCache: modelCacheSetting(),
  workers: envNumber('ICECAT_DETECTOR_WORKERS', defaultWorkers, { min: 1, max: maxWorkers, integer: true }),
  taskTimeoutMs: envNumber('ICECAT_DETECTOR_TASK_TIMEOUT_MS', 60_000, { min: 100, max: 3_600_000, integer: true }),
  throttleRate: envNumber('ICECAT_DETECTOR_THROTTLE_RATE', 0, { min: 0, max: 1 }),
  latencyMs: envNumber('ICECAT_DETECTOR_LATENCY_MS', 0, { min: 0, max: 600_000 }),
});

/** What the operator may set for `npm start`; unset, the stack makes its own (the keys, kept in the data dir). */
export interface StackSettings {
  demoApiKey?: string;
  /** An external DynamoDB (DynamoDB Local) instead of dynalite. */
  dynamodbEndpoint?: string;
  cursorSecret?: string;
  callbackSigningKey?: string;
  claimLeaseSeconds?: string;
  maxAttempts?: string;
  callbackLoopbackPorts?: string;
  /** Whether POWERTOOLS_LOG_LEVEL is set (a quiet stack sets WARN only where it is not). */
  logLevelSet: boolean;
  /** ICECAT_IAM_ROLES_FILE: the roles the stack checks the functions against, instead of resources/roles.yml. */
  rolesFile?: string;
}

export function loadStackSettings(): StackSettings {
  return {
    demoApiKey: envString('ICECAT_DEMO_API_KEY'),
    dynamodbEndpoint: envString('ICECAT_DYNAMODB_ENDPOINT'),
    cursorSecret: envString('CURSOR_SECRET'),
    callbackSigningKey: envString('CALLBACK_SIGNING_KEY'),
    claimLeaseSeconds: envString('CLAIM_LEASE_SECONDS'),
    maxAttempts: envString('INGEST_MAX_ATTEMPTS'),
    callbackLoopbackPorts: process.env.CALLBACK_LOOPBACK_PORTS,
    logLevelSet: process.env.POWERTOOLS_LOG_LEVEL !== undefined,
    rolesFile: envString('ICECAT_IAM_ROLES_FILE'),
  };
}

/** Where client:create writes: the local DynamoDB as the stack announces it, or (--aws) a deployed table by TABLE_NAME. */
export function loadClientCreateSettings(): {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  tableName: string;
  deployedTableName?: string;
} {
  return {
    endpoint: envString('AWS_ENDPOINT_URL_DYNAMODB') ?? `http://${LOCAL_NAMES.host}:${localPorts().dynamodb}`,
    region: envString('AWS_REGION') ?? LOCAL_NAMES.region,
    accessKeyId: envString('AWS_ACCESS_KEY_ID') ?? LOCAL_NAMES.accessKeyId,
    secretAccessKey: envString('AWS_SECRET_ACCESS_KEY') ?? LOCAL_NAMES.secretAccessKey,
    tableName: envString('TABLE_NAME') ?? LOCAL_NAMES.table,
    deployedTableName: envString('TABLE_NAME'),
  };
}

/** What the stack reads of the operator's environment, once, when it starts (local/stack/stack.ts startStack). */
export interface LocalConfig {
  dataDir: string;
  ports: StackPorts;
  settings: StackSettings;
  reconcile: { intervalMs: number; graceMs: number };
  /** The expiry sweep's period (ICECAT_EXPIRY_INTERVAL_SECONDS, 60 s). */
  expiryIntervalMs: number;
  /** Free space under which the stack warns (ICECAT_LOW_SPACE_MB, 1 GiB). */
  lowSpaceBytes: number;
}

export function loadLocalConfig(): LocalConfig {
  return {
    dataDir: dataDirFromEnv(),
    ports: localPorts(),
    settings: loadStackSettings(),
    reconcile: reconcileSettingsFromEnv(),
    expiryIntervalMs: expiryIntervalMsFromEnv(),
    lowSpaceBytes: lowSpaceBytesFromEnv(),
  };
}

/**
 * What the stack's own parts that stand in for a function's work (the sweeps' look after callbacks and re-detections,
 * the count check, the import lister) read of the functions' configuration: read once by startStack, as a function
 * would read it, from the environment the stack applies (functions/config.ts, lib/config.ts), and handed to them.
 */
export interface LocalFunctionSettings {
  /** The ingest's (the import lister's), read only where the stack applies its environment (it names the table). */
  ingest?: IngestConfig;
  pricePerImageUsd: number;
  aws: AwsClientSettings;
  clientLimits: { defaults: ClientLimits; cacheMs: number };
  notify: NotifyConfig;
  callbackGraceSeconds: number;
  /** REDETECT_PAGE_SIZE when set: the re-detection sweep's pages, as the functions read it. */
  redetectPaging: { pageSize?: number };
}

/**
 * The functions' settings the stack's own stand-ins for a function's work use (its sweeps, its count check, its import
 * lister), read once the stack's environment is applied, as the functions read theirs (docs/development.md).
 */
export const loadLocalFunctionSettings = (applied: boolean): LocalFunctionSettings => ({
  // The ingest's configuration names the table and the bucket: only where the stack's environment is applied.
  ...(applied ? { ingest: loadIngestConfig() } : {}),
  pricePerImageUsd: pricePerImageUsd(),
  aws: loadAwsClientSettings(),
  clientLimits: { defaults: defaultClientLimits(), cacheMs: clientLimitsCacheMs() },
  notify: loadNotifyConfig(),
  callbackGraceSeconds: callbackGraceSeconds(),
  redetectPaging: redetectPaging(),
});

/** The reconciliation sweep's period and grace on the local stack (ICECAT_RECONCILE_INTERVAL_SECONDS, _GRACE_SECONDS). */
export function reconcileSettingsFromEnv(): { intervalMs: number; graceMs: number } {
  return {
    intervalMs: envNumber('ICECAT_RECONCILE_INTERVAL_SECONDS', 60, { min: 0.05, max: 86_400 }) * 1000,
    graceMs: envNumber('ICECAT_RECONCILE_GRACE_SECONDS', 10, { min: 0, max: 86_400 }) * 1000,
  };
}

/** The expiry sweep's period (ICECAT_EXPIRY_INTERVAL_SECONDS, 60 s). */
export const expiryIntervalMsFromEnv = (): number => envNumber('ICECAT_EXPIRY_INTERVAL_SECONDS', 60, { min: 0.05, max: 86_400 }) * 1000;

/** Free space under which the stack warns (ICECAT_LOW_SPACE_MB, 1024). */
export const lowSpaceBytesFromEnv = (): number => envNumber('ICECAT_LOW_SPACE_MB', 1024, { min: 0 }) * 1024 * 1024;

/** How long `npm start` waits for work in flight at a stop (ICECAT_STOP_GRACE_SECONDS, 5). */
export const stopGraceMs = (): number => envNumber('ICECAT_STOP_GRACE_SECONDS', 5, { min: 0, max: 600 }) * 1000;

/** JAVA_HOME, where DynamoDB Local's Java is looked for first. */
export const javaHomeFromEnv = (): { JAVA_HOME?: string } => ({ JAVA_HOME: envString('JAVA_HOME') });

// ---- Writes: the environment the stack applies for its in-process handlers, and what a child process inherits.

/** Sets each variable, remembering in `previous` what it held (the first time only), for restoreEnv. */
export function applyEnv(env: Record<string, string | undefined>, previous: Map<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (!previous.has(name)) previous.set(name, process.env[name]);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/** Puts back the environment applyEnv changed. */
export function restoreEnv(previous: Map<string, string | undefined>): void {
  for (const [name, value] of previous) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/** Sets a variable only where it is unset (a tool's own default for the SDK, say). */
export function defaultEnv(name: string, value: string): void {
  process.env[name] ??= value;
}

/** This process's environment with `extra` on top: what a child process it runs inherits. */
export const childEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({ ...process.env, ...extra });
