// AWS clients, built once per container and reused. Endpoints come from the SDK's own
// AWS_ENDPOINT_URL_<SERVICE> variables, so the same code talks to AWS or to the local stack.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RekognitionClient } from '@aws-sdk/client-rekognition';
import { S3Client } from '@aws-sdk/client-s3';

export interface AwsClients {
  s3: S3Client;
  ddb: DynamoDBDocumentClient;
  rekognition: RekognitionClient;
}

export function createClients(): AwsClients {
  return {
    s3: new S3Client({
      // Local S3 stand-ins answer path-style only; checksums only when an operation requires them (s3rver).
      forcePathStyle: process.env.S3_FORCE_PATH_STYLE === 'true',
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    // Throttling is retried by the SDK's standard strategy: exponential backoff with full jitter.
    rekognition: new RekognitionClient({ maxAttempts: Number(process.env.REKOGNITION_MAX_ATTEMPTS ?? 6) }),
  };
}

let cached: AwsClients | undefined;
/** The container's shared clients. */
export const clients = (): AwsClients => (cached ??= createClients());
