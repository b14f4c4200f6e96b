// API Gateway HTTP API (payload v2) entry point of the `api` function: every read route, GET /v1/openapi.json, the web
// app (GET /, GET /app/*) and the $default route (unknown paths answer 404 here). No S3 client: images' URLs are
// presigned without one (no S3 call); writing batches is functions/batches.
// Configuration, clients and caches are built once per container; a missing CURSOR_SECRET, TABLE_NAME or BUCKET_NAME
// fails the cold start, naming the variable.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { imageLinkSignerOf } from '../../lib/api/image-links';
import { buildOpenApiDocument } from '../../lib/api/openapi';
import { apiRoutes } from '../../lib/api/routes';
import { ApiService } from '../../lib/api/service';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient } from '../../lib/aws/clients';
import { annotate, annotatingClient, startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import { createApiHandler } from '../../lib/http/app';
import { containerRateLimiter } from '../../lib/quota/rate-limiter';
import { ApiKeyStore } from '../../lib/store/client/keys';
import { ClientLimitsReader } from '../../lib/store/client/limits';
import { StoreReads } from '../../lib/store/store-reads';
import { cursorCodec } from '../../lib/store/table/cursor';
import { loadWebBundle } from '../../lib/web/bundle';
import { s3Origins, type WebBundle, WebSite } from '../../lib/web/site';
import {
  clientLimitsCacheMs,
  defaultClientLimits,
  IMAGE_URL_WINDOW_SECONDS,
  loadApiConfig,
  loadCursorSecret,
  loadS3OriginSettings,
  loadS3Settings,
} from '../config';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const config = loadApiConfig();
const cursors = cursorCodec(loadCursorSecret());
const ddb = createDocumentClient();
const s3Settings = loadS3Settings();
const s3OriginSettings = loadS3OriginSettings();
const routes = apiRoutes(config);
const limits = new ClientLimitsReader({
  ddb,
  tableName: config.tableName,
  defaults: defaultClientLimits(),
  cacheMs: clientLimitsCacheMs(),
});

const app = createApiHandler({
  routes: routes.filter((route) => route.function === 'api'),
  services: {
    api: new ApiService({
      store: new StoreReads({ ddb, tableName: config.tableName, cursors }),
      links: imageLinkSignerOf(
        { bucket: config.bucketName, seconds: config.imageUrlSeconds, windowSeconds: IMAGE_URL_WINDOW_SECONDS },
        s3Settings,
      ),
      limits,
      catMinConfidence: config.catMinConfidence,
      pricePerImageUsd: config.pricePerImageUsd,
    }),
  },
  authenticator: annotatingClient(
    new ApiKeyAuthenticator({ keys: new ApiKeyStore({ ddb, tableName: config.tableName }), cacheMs: config.apiKeyCacheMs }),
  ),
  rateLimiter: containerRateLimiter((clientId) => limits.limitsOf(clientId)),
  openApiDocument: () => buildOpenApiDocument(routes),
  webSite: async () => {
    const bundle = await loadWebBundle();
    if (site?.bundle !== bundle) site = { bundle, site: new WebSite(bundle, s3Origins(s3OriginSettings)) };
    return site.site;
  },
});
let site: { bundle: WebBundle; site: WebSite } | undefined;

export const handler = tracedHandler((event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  annotate({ batchId: event.pathParameters?.batchId });
  return app(event, context);
});
