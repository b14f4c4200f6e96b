// AWS clients, built once per container and reused. Endpoints come from the SDK's own
// AWS_ENDPOINT_URL_<SERVICE> variables, so the same code talks to AWS or to the local stack; what this project sets of
// them (path-style S3, DetectLabels attempts) is handed in by the runtime's edge (lib/config.ts AwsClientSettings).
// One factory per service, so a function's bundle carries only the clients it uses. Each client is captured by the
// tracer (tracing.ts): on Lambda its calls are subsegments of the function's trace; elsewhere it is the client as built.
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { RekognitionClient } from '@aws-sdk/client-rekognition';
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { S3ControlClient } from '@aws-sdk/client-s3-control';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsClientSettings } from '../config';
import { traced } from './tracing';

/** Static keys a client signs with. */
interface SigningKeys {
  accessKeyId: string;
  secretAccessKey: string;
}

let signingKeys: SigningKeys | undefined;

/**
 * The keys every client built from now on signs with; undefined (always, on Lambda) leaves the SDK's own chain, the
 * role's credentials in the environment. The local stack sets a function's own keys while it builds that function
 * (local/iam/signing.ts), so each function's requests name it and are checked against its role.
 */
export function signNewClientsWith(keys: SigningKeys | undefined): void {
  signingKeys = keys;
  // The container's shared clients are built again for the next function that asks (each signs as its builder).
  cached = undefined;
  sqs = undefined;
}

const signing = (): { credentials?: SigningKeys } => (signingKeys ? { credentials: { ...signingKeys } } : {});

export interface AwsClients {
  s3: S3Client;
  ddb: DynamoDBDocumentClient;
  rekognition: RekognitionClient;
}

/**
 * No logger is configured, yet the SDK's logger middleware runs every input and output through the schema's
 * sensitive-data filter for its no-op logger: ~5% of the API's CPU for a page of 20 images.
 */
function withoutLogger<C extends { middlewareStack: { remove(name: string): boolean } }>(client: C): C {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

// `cacheMiddleware`: the SDK resolves a command's middleware stack once per command class instead of at every call
// (its option for request-heavy clients, ~5 S3 requests an image here). Only where no command adds middleware of its
// own: the document client refuses it (lib-dynamodb), and a DetectLabels command may carry the local client hint
// (lib/ingest/detect.ts), which a cached stack would keep for every later call.
/** The functions' S3 client over `config` (its endpoint, region, credentials); a bench builds it so over the local S3. */
export const s3ClientOf = (config: S3ClientConfig): S3Client =>
  traced(
    withoutLogger(
      new S3Client({
        // Checksums only when an operation requires them (s3rver).
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        cacheMiddleware: true,
        ...signing(),
        ...config,
      }),
    ),
  );

// Local S3 stand-ins answer path-style only.
export const createS3Client = (settings: Pick<AwsClientSettings, 's3ForcePathStyle'>): S3Client =>
  s3ClientOf({ forcePathStyle: settings.s3ForcePathStyle });

/**
 * The document client the functions use over `client` (a bench builds it over its local table the same way). Without
 * the logger middleware, its filter would also copy every answer: a sixth of what an export allocated.
 */
export function documentClientOf(client: DynamoDBClient): DynamoDBDocumentClient {
  // The base client is captured: the document client sends through its middleware stack.
  return DynamoDBDocumentClient.from(traced(withoutLogger(client)), { marshallOptions: { removeUndefinedValues: true } });
}

export const createDocumentClient = (): DynamoDBDocumentClient => documentClientOf(new DynamoDBClient(signing()));

/**
 * A document client built as the functions' is, for a table `config` names (an endpoint, keys; `{}` is the SDK's own
 * chain, on AWS): the local stack's in-process work and the operator tools, which so marshal as the functions do.
 */
export const documentClientAt = (config: DynamoDBClientConfig): DynamoDBDocumentClient => documentClientOf(new DynamoDBClient(config));

// Throttling is retried by the SDK's standard strategy: exponential backoff with full jitter.
export const createRekognitionClient = (settings: Pick<AwsClientSettings, 'rekognitionMaxAttempts'>): RekognitionClient =>
  traced(withoutLogger(new RekognitionClient({ maxAttempts: settings.rekognitionMaxAttempts, ...signing() })));

export const createSqsClient = (): SQSClient => traced(new SQSClient(signing()));

/** S3 Control (an import's Batch Operations job, lib/import/batch-operations.ts); its endpoint names the account. */
export const createS3ControlClient = (): S3ControlClient => traced(withoutLogger(new S3ControlClient(signing())));

export const createEventBridgeClient = (): EventBridgeClient => traced(new EventBridgeClient(signing()));

let sqs: SQSClient | undefined;
/**
 * The container's one SQS client, built when a queue first needs it: on AWS, where the queues have URLs (the local
 * stack's job queues run in-process and need none). A function's queues share it.
 */
export const sqsClient = (): SQSClient => (sqs ??= createSqsClient());

export function createClients(settings: AwsClientSettings): AwsClients {
  return { s3: createS3Client(settings), ddb: createDocumentClient(), rekognition: createRekognitionClient(settings) };
}

let cached: AwsClients | undefined;
/** The container's shared clients (all three: the ingest uses each), built with the first caller's settings. */
export const clients = (settings: AwsClientSettings): AwsClients => (cached ??= createClients(settings));
