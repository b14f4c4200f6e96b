// API Gateway HTTP API (payload v2) entry point of the `batches` function: POST /v1/batches, the one route that signs
// uploads and so the one function with an S3 client. Same app, middlewares and error mapping as functions/api.
// A missing TABLE_NAME or BUCKET_NAME fails the cold start, naming the variable.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { loadApiConfig } from '../../lib/api/config';
import { BatchCreationService } from '../../lib/api/batch-creation';
import { apiRoutes } from '../../lib/api/routes';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { createApiHandler } from '../api/app';

const config = loadApiConfig();
const ddb = createDocumentClient();

const app = createApiHandler({
  routes: apiRoutes(config).filter((route) => route.function === 'batches'),
  services: {
    batches: new BatchCreationService({
      ddb,
      tableName: config.tableName,
      s3: createS3Client(),
      bucketName: config.bucketName,
      defaultRetentionDays: config.defaultRetentionDays,
      maxUploadBytes: config.maxUploadBytes,
      uploadExpiresSeconds: config.uploadExpiresSeconds,
    }),
  },
  authenticator: new ApiKeyAuthenticator({ ddb, tableName: config.tableName, cacheMs: config.apiKeyCacheMs }),
});

export const handler = (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> =>
  app(event, context);
