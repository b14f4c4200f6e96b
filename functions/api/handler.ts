// API Gateway HTTP API (payload v2) entry point. Configuration, clients and caches are built once per container;
// a missing CURSOR_SECRET, TABLE_NAME or BUCKET_NAME fails the cold start, naming the variable.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { loadApiConfig } from '../../lib/api/config';
import { apiRoutes } from '../../lib/api/routes';
import { ApiService } from '../../lib/api/service';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { cursorCodec } from '../../lib/store/cursor';
import { createApiHandler } from './app';

const config = loadApiConfig();
const ddb = createDocumentClient();
const s3 = createS3Client();

const app = createApiHandler({
  routes: apiRoutes(config),
  service: new ApiService({
    store: { ddb, tableName: config.tableName, cursors: cursorCodec(config.cursorSecret) },
    s3,
    bucketName: config.bucketName,
    defaultRetentionDays: config.defaultRetentionDays,
    maxUploadBytes: config.maxUploadBytes,
    uploadExpiresSeconds: config.uploadExpiresSeconds,
  }),
  authenticator: new ApiKeyAuthenticator({ ddb, tableName: config.tableName, cacheMs: config.apiKeyCacheMs }),
});

export const handler = (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> =>
  app(event, context);
