// API Gateway HTTP API (payload v2) entry point of the `batches` function: the batch lifecycle's writes (create, more
// upload forms, close). Creating and adding sign uploads, so this is the one API function with an S3 client and the
// one whose role writes. Same app, middlewares and error mapping as functions/api.
// A missing TABLE_NAME or BUCKET_NAME fails the cold start, naming the variable.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { loadApiConfig } from '../../lib/api/config';
import { apiRoutes } from '../../lib/api/routes';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { createApiHandler } from '../../lib/http/app';
import { BatchStore } from '../../lib/store/batch-store';

const config = loadApiConfig();
const ddb = createDocumentClient();

const app = createApiHandler({
  routes: apiRoutes(config).filter((route) => route.function === 'batches'),
  services: {
    batches: new BatchLifecycleService({
      store: new BatchStore({ ddb, tableName: config.tableName, transactions: config.transactions }),
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
