// The local environment contract: what the handlers, the AWS CLI and the tests need to reach the local stack.
// One function builds it so that `npm start`, the jest global setup and the benches agree.
import type { Context } from 'aws-lambda';
import { ConfigError } from '../lib/config';
import { parsePortRanges, portRangesWithout } from '../lib/notify/target';

export interface StackPorts {
  api: number;
  s3: number;
  dynamodb: number;
  rekognition: number;
  /** The bridge's status endpoint (idle wait, dead letters) for tests and benches in other processes. */
  bridge: number;
}

export const DEFAULT_PORTS: StackPorts = { api: 3000, s3: 4569, dynamodb: 8000, rekognition: 4575, bridge: 4570 };

export const LOCAL_NAMES = {
  region: 'us-east-1',
  /** s3rver's built-in account answers InvalidAccessKeyId to any other key; dynalite takes any. */
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  bucket: 'icecat-images',
  table: 'IceCatWrangler',
  host: '127.0.0.1',
} as const;

/** CAT_MIN_CONFIDENCE for the local stack: Rekognition's, since Confidence is on its scale. */
export const LOCAL_CAT_MIN_CONFIDENCE = 80;
/** REKOGNITION_MIN_CONFIDENCE for the local stack: as on AWS, so near misses (20..80) are recorded. */
export const LOCAL_REKOGNITION_MIN_CONFIDENCE = 20;

/**
 * The cat threshold and the label floor of the local stack: AWS's, since the local detector maps its scores
 * onto Rekognition's confidence scale (local/detector/thresholds.ts). Defined here, below the detector's room, which
 * the stack's contract never imports.
 */
export const LOCAL_DETECTOR_CONFIDENCE = {
  catMin: LOCAL_CAT_MIN_CONFIDENCE,
  labelMin: LOCAL_REKOGNITION_MIN_CONFIDENCE,
} as const;

const PORT_VARS: Record<keyof StackPorts, string> = {
  api: 'ICECAT_API_PORT',
  s3: 'ICECAT_S3_PORT',
  dynamodb: 'ICECAT_DYNAMODB_PORT',
  rekognition: 'ICECAT_REKOGNITION_PORT',
  bridge: 'ICECAT_BRIDGE_PORT',
};

export class LocalEnvError extends ConfigError {
  override name = 'LocalEnvError';
}

/** Ports from ICECAT_*_PORT variables, each falling back to its default (local/config.ts's localPorts gives it the process's). */
export function portsFromEnv(env: NodeJS.ProcessEnv, defaults: StackPorts = DEFAULT_PORTS): StackPorts {
  const ports = { ...defaults };
  for (const [name, variable] of Object.entries(PORT_VARS) as [keyof StackPorts, string][]) {
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new LocalEnvError(`${variable} must be a port number (0-65535), got "${raw}"`);
    }
    ports[name] = port;
  }
  return ports;
}

export interface LocalEnvOptions {
  dataDir: string;
  host?: string;
  /** An external DynamoDB (DynamoDB Local) used instead of dynalite. */
  dynamodbEndpoint?: string;
  /** HMAC key of the API's paging cursors (kept in the data dir so cursors survive a restart). */
  cursorSecret: string;
  /** Server key of completion callback secrets (kept in the data dir so a batch's secret survives a restart). */
  callbackSigningKey: string;
  /** CLAIM_LEASE_SECONDS when the caller set one; else LOCAL_CLAIM_LEASE_SECONDS. */
  claimLeaseSeconds?: string;
  /** INGEST_MAX_ATTEMPTS when the caller set one; else LOCAL_MAX_RECEIVE_COUNT. */
  maxAttempts?: string;
  /** The operator's CALLBACK_LOOPBACK_PORTS: the ports on this machine completion callbacks may reach (none if unset). */
  callbackLoopbackPorts?: string;
}

/**
 * The loopback ports callbacks may reach: the operator's list without the stack's own ports (its API, S3, DynamoDB,
 * detector and bridge, whose control routes act on every client's work), as CALLBACK_LOOPBACK_PORTS text.
 */
export function callbackLoopbackPorts(operatorList: string | undefined, ports: StackPorts, dynamodbEndpoint?: string): string {
  const ranges = parsePortRanges(operatorList ?? '');
  if (!ranges)
    throw new LocalEnvError(`CALLBACK_LOOPBACK_PORTS must list ports 1-65535 and ranges like "8080,9000-9099", got "${operatorList}"`);
  const own = Object.values(ports);
  if (dynamodbEndpoint) own.push(Number(new URL(dynamodbEndpoint).port || 80));
  return portRangesWithout(ranges, own);
}

/**
 * The local queue's receives before a dead letter, and so the ingest's attempts at one upload: the last receive records
 * an upload whose fault reaches the catch, and the sweep's delivery after a dead letter ends one that never returned.
 */
export const LOCAL_MAX_RECEIVE_COUNT = 3;

/**
 * A claim's lease on the local stack. It only has to outlast one live run's hold on one image (seconds with the offline
 * detector, under load too); on AWS it is the function's timeout. After a kill -9 an image claimed by the dead run is
 * taken over when the lease ends, so this bounds the recovery.
 */
export const LOCAL_CLAIM_LEASE_SECONDS = 30;

/** The environment of the local stack listening on the given (already bound) ports. */
export function buildLocalEnv(ports: StackPorts, opts: LocalEnvOptions): Record<string, string> {
  const host = opts.host ?? LOCAL_NAMES.host;
  const url = (port: number) => `http://${host}:${port}`;
  return {
    AWS_REGION: LOCAL_NAMES.region,
    // The AWS CLI v1 and Python SDKs read only this one.
    AWS_DEFAULT_REGION: LOCAL_NAMES.region,
    AWS_ACCESS_KEY_ID: LOCAL_NAMES.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_NAMES.secretAccessKey,
    AWS_ENDPOINT_URL_S3: url(ports.s3),
    AWS_ENDPOINT_URL_DYNAMODB: opts.dynamodbEndpoint ?? url(ports.dynamodb),
    AWS_ENDPOINT_URL_REKOGNITION: url(ports.rekognition),
    // The ingest names the uploading client to the local detector, whose worker pool queues images fairly (§11).
    REKOGNITION_CLIENT_HINT: 'true',
    S3_FORCE_PATH_STYLE: 'true',
    // s3rver cannot read aws-chunked bodies with trailing checksums, which SDKs and the AWS CLI send by default.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    TABLE_NAME: LOCAL_NAMES.table,
    BUCKET_NAME: LOCAL_NAMES.bucket,
    CAT_MIN_CONFIDENCE: String(LOCAL_DETECTOR_CONFIDENCE.catMin),
    REKOGNITION_MIN_CONFIDENCE: String(LOCAL_DETECTOR_CONFIDENCE.labelMin),
    ICECAT_API_PORT: String(ports.api),
    ICECAT_S3_PORT: String(ports.s3),
    ICECAT_DYNAMODB_PORT: String(ports.dynamodb),
    ICECAT_REKOGNITION_PORT: String(ports.rekognition),
    ICECAT_BRIDGE_PORT: String(ports.bridge),
    ICECAT_API_URL: url(ports.api),
    ICECAT_BRIDGE_URL: url(ports.bridge),
    ICECAT_DATA_DIR: opts.dataDir,
    CURSOR_SECRET: opts.cursorSecret,
    CALLBACK_SIGNING_KEY: opts.callbackSigningKey,
    // Receivers on this machine (http://127.0.0.1) are allowed here only, on the ports the operator lists and never on
    // the stack's own; retries span minutes, not a day.
    CALLBACK_ALLOW_LOOPBACK: 'true',
    CALLBACK_LOOPBACK_PORTS: callbackLoopbackPorts(opts.callbackLoopbackPorts, ports, opts.dynamodbEndpoint),
    CALLBACK_RETRY_BASE_SECONDS: '2',
    CALLBACK_RETRY_MAX_DELAY_SECONDS: '60',
    CALLBACK_RETRY_WINDOW_SECONDS: '600',
    CLAIM_LEASE_SECONDS: opts.claimLeaseSeconds ?? String(LOCAL_CLAIM_LEASE_SECONDS),
    INGEST_MAX_ATTEMPTS: opts.maxAttempts ?? String(LOCAL_MAX_RECEIVE_COUNT),
    // dynalite has no transactions: record and counter writes go one after the other, repaired by recount.
    DDB_TRANSACTIONS: opts.dynamodbEndpoint ? 'true' : 'false',
  };
}

/** The account id the local stand-ins report (s3rver's built-in account). */
export const LOCAL_ACCOUNT_ID = '123456789000';

/** A Lambda context for handlers invoked in-process (middy reads getRemainingTimeInMillis). */
export function createLambdaContext(functionName: string, timeoutMs: number, requestId: string): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_NAMES.region}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${functionName}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
