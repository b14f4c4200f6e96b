// The route table of docs/design.md §3, one file per resource (route.ts says what a route is). serverless.yml's routes
// and the local gateway both follow it; test/deploy checks the former.
import type { RouteTarget } from '../functions';
import type { SchemaLimits } from '../schemas/common';
import { auditRoutes } from './audit';
import { batchRoutes } from './batches';
import { clientRoutes } from './clients';
import { exportRoutes } from './exports';
import { imageRoutes } from './images';
import { importRoutes } from './imports';
import { redetectRoutes } from './redetect';
import { reviewRoutes } from './reviews';
import type { Route } from './route';
import { webRoutes } from './web';

export function apiRoutes(limits: SchemaLimits): Route[] {
  return [
    ...batchRoutes(limits),
    ...importRoutes,
    ...exportRoutes,
    ...redetectRoutes,
    ...reviewRoutes,
    ...auditRoutes,
    ...clientRoutes,
    ...imageRoutes,
    ...webRoutes,
  ];
}

// Limits shape only the schemas, never where a route goes.
const ANY_LIMITS: SchemaLimits = { maxRetentionDays: 1, defaultRetentionDays: 1, maxFilesPerBatch: 1, maxUploadBytes: 1 };

/** Method, path and function of every route: what API Gateway and the local gateway route requests by. */
export const routeTargets = (): RouteTarget[] =>
  apiRoutes(ANY_LIMITS).map(({ method, path, function: fn }) => ({ method, path, function: fn }));
