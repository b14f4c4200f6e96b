// What a route of the table (index.ts) is: its schemas (validation and the OpenAPI document both read them), its success
// status, the errors it can answer, the operation it runs, and the Lambda function that serves it; and the path
// parameters and error lists the resources' routes share.
import * as z from 'zod/mini';
import type { BatchLifecycleService } from '../batch-lifecycle';
import type { ApiFunctionName } from '../functions';
import type { HttpAnswer } from '../http-answer';
import { batchIdSchema, fprintSchema } from '../schemas/common';
import type { ApiService } from '../service';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The web app's files as the routes serve them (lib/web/site.ts, on the function that serves them). */
export interface WebPages {
  page(request: { headers: Readonly<Record<string, string | undefined>> }): HttpAnswer;
  asset(name: string, request: { headers: Readonly<Record<string, string | undefined>> }): HttpAnswer;
}

/** Error statuses a route may answer; 400, 401 (when authenticated), 429 and 500 apply to every route. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500;

/** The operations each function's handler builds, by function. */
export interface ApiServices {
  api: ApiService;
  batches: BatchLifecycleService;
}

interface RouteInput<S, P, Q, B> {
  service: S;
  /** Absent only on routes without authentication. */
  clientId: string;
  params: P;
  query: Q;
  body: B;
  /** Lower-cased request headers (only the web app's routes read them). */
  headers: Readonly<Record<string, string | undefined>>;
  openApiDocument: () => unknown;
  /** The web app's files, on the function that serves them. */
  webSite: () => Promise<WebPages>;
}

type AnySchema = z.ZodMiniType;
type ObjectSchema = z.ZodMiniObject;

export interface Route<
  F extends ApiFunctionName = ApiFunctionName,
  P extends ObjectSchema = ObjectSchema,
  Q extends ObjectSchema = ObjectSchema,
  B extends AnySchema = AnySchema,
> {
  /** The Lambda function serving the route (serverless.yml). */
  function: F;
  method: HttpMethod;
  /** OpenAPI path template; the router matches the same template. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Access patterns of docs/design.md §2 this route serves. */
  accessPatterns?: string[];
  authenticated: boolean;
  params: P;
  query: Q;
  body?: B;
  status: 200 | 201 | 202;
  response: AnySchema;
  /** Media type of the success answer (default application/json); other types are answered as an HttpAnswer. */
  mediaType?: string;
  /** Answers that are not the JSON `response` (an export's file, a redirect), by status: what the OpenAPI document shows. */
  otherAnswers?: Record<number, { description: string; content?: string[]; headers?: string[] }>;
  errors: ErrorStatus[];
  /** Rate-limit tokens the request costs in all, from its valid body; 1 (the token taken on arrival) when absent. */
  rateCost?: (body: B extends AnySchema ? z.output<B> : undefined) => number;
  run(input: RouteInput<ApiServices[F], z.output<P>, z.output<Q>, B extends AnySchema ? z.output<B> : undefined>): Promise<unknown>;
}

/** Keeps each route's schema types tied to its operation, then erases them for the table. */
export const route = <F extends ApiFunctionName, P extends ObjectSchema, Q extends ObjectSchema, B extends AnySchema>(
  r: Route<F, P, Q, B>,
): Route => r as unknown as Route;

export const noParams = z.strictObject({});

export const batchParams = z.strictObject({ batchId: batchIdSchema });
export const imageParams = z.strictObject({ batchId: batchIdSchema, fprint: fprintSchema });

export const BATCH_ERRORS: ErrorStatus[] = [400, 401, 404, 429, 500];
