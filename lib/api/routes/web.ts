// Unauthenticated: the OpenAPI document and the web app's page and files.
import * as z from 'zod/mini';
import { noQuerySchema } from '../schemas/common';
import { noParams, type Route, route } from './route';

const assetParams = z.strictObject({
  asset: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}\.(js|css|svg)$/, 'must name a file of the web app')),
});

const getOpenApiRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This document',
  authenticated: false,
  params: noParams,
  query: noQuerySchema,
  status: 200,
  response: z.looseObject({ openapi: z.string() }).check(z.meta({ description: 'OpenAPI 3.1 document.' })),
  errors: [400, 500],
  run: async ({ openApiDocument }) => openApiDocument(),
});

const getWebAppRoute = route({
  function: 'api',
  method: 'GET',
  path: '/',
  operationId: 'getWebApp',
  summary: 'The web app: sign in with an API key, batches, thumbnails, uploads (DESIGN §7)',
  authenticated: false,
  params: noParams,
  // Links may carry tracking or other parameters; the page reads none.
  query: z.looseObject({}),
  status: 200,
  mediaType: 'text/html',
  response: z.string().check(z.meta({ description: 'The page; its script and stylesheet are under /app/.' })),
  errors: [500],
  run: async ({ webSite, headers }) => (await webSite()).page({ headers }),
});

const getWebAppFileRoute = route({
  function: 'api',
  method: 'GET',
  path: '/app/{asset}',
  operationId: 'getWebAppFile',
  summary: "The web app's script, stylesheet and icon (content-hashed names are cached for good)",
  authenticated: false,
  params: assetParams,
  query: noQuerySchema,
  status: 200,
  mediaType: 'text/javascript',
  response: z.string(),
  errors: [400, 404, 500],
  run: async ({ webSite, params, headers }) => (await webSite()).asset(params.asset, { headers }),
});

export const webRoutes: Route[] = [getOpenApiRoute, getWebAppRoute, getWebAppFileRoute];
