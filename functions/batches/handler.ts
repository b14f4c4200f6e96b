// API Gateway HTTP API (payload v2) entry point of the `batches` function: the batch lifecycle's writes (create, more
// upload forms, close, delete) and the export. Creating and adding sign uploads and exports go to S3, so this is the
// one API function with an S3 client and the one whose role writes. Same app, middlewares and error mapping as
// functions/api. A missing TABLE_NAME, BUCKET_NAME or CALLBACK_SIGNING_KEY fails the cold start, naming the variable.
// The erasure runs in functions/erase (queued here: ERASE_QUEUE_URL on AWS, in-process locally).
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { IMAGE_URL_WINDOW_SECONDS, loadApiConfig } from '../../lib/api/config';
import { imageLinkSignerFromEnv } from '../../lib/api/image-links';
import { apiRoutes } from '../../lib/api/routes';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient, createS3Client, sqsClient } from '../../lib/aws/clients';
import { loadExportConfig } from '../../lib/export/config';
import { createApiHandler } from '../../lib/http/app';
import { jobQueue } from '../../lib/jobs/queue';
import { loadCallbackSigningKey } from '../../lib/notify/completion';
import { loadNotifyConfig } from '../../lib/notify/schedule';
import { completionFromEnv } from '../../lib/notify/wiring';
import { BatchStore } from '../../lib/store/batch-store';

const config = loadApiConfig();
const ddb = createDocumentClient();
const signingKey = loadCallbackSigningKey();

const app = createApiHandler({
  routes: apiRoutes(config).filter((route) => route.function === 'batches'),
  services: {
    batches: new BatchLifecycleService({
      // Closing can finish a batch: the completion callback starts here then.
      store: new BatchStore({ ddb, tableName: config.tableName, transactions: config.transactions, onDone: completionFromEnv() }),
      s3: createS3Client(),
      bucketName: config.bucketName,
      defaultRetentionDays: config.defaultRetentionDays,
      catMinConfidence: config.catMinConfidence,
      maxUploadBytes: config.maxUploadBytes,
      uploadExpiresSeconds: config.uploadExpiresSeconds,
      exports: { ddb, tableName: config.tableName, config: loadExportConfig() },
      erasures: jobQueue('erase', process.env.ERASE_QUEUE_URL || undefined, sqsClient, { awaitImmediate: true }),
      callbacks: { signingKey, allowLoopback: loadNotifyConfig().allowLoopback },
      // A review answers the image, its links signed as the read function signs them.
      links: imageLinkSignerFromEnv({ bucket: config.bucketName, seconds: config.imageUrlSeconds, windowSeconds: IMAGE_URL_WINDOW_SECONDS }),
    }),
  },
  authenticator: new ApiKeyAuthenticator({ ddb, tableName: config.tableName, cacheMs: config.apiKeyCacheMs }),
});

export const handler = (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> =>
  app(event, context);
