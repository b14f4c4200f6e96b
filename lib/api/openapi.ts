// GET /v1/openapi.json, generated from the route table and the very zod schemas the handlers validate with.
import * as z from 'zod/mini';
import type { ErrorStatus, Route } from './routes/route';
import { errorSchema } from './schemas/common';

type JsonSchema = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'A parameter, path segment, body field or cursor is invalid; the message names it.',
  401: 'No API key, or an unknown one (Authorization: Bearer <api key>).',
  403: 'The source is outside the sources the client may import from (source_not_allowed).',
  404: 'No such batch or image for this client (another client’s answers the same).',
  409: 'Conflict with the current state; retry.',
  413: 'A declared file is larger than accepted.',
  429: "Too many requests: rate_limited (the client's request rate; wait Retry-After seconds) or throttled (retry with backoff).",
  500: 'A bug; the message says nothing more.',
};

/**
 * zod puts named schemas (meta id) under $defs; OpenAPI keeps them once under components.schemas. Moves them there
 * and points the references at the new place.
 */
function hoist(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$schema' || k === '$defs') continue;
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : rewrite(v);
    }
    return out;
  };
  const defs = (schema.$defs ?? {}) as Record<string, JsonSchema>;
  for (const [id, def] of Object.entries(defs)) components[id] ??= rewrite(def) as JsonSchema;
  return rewrite(schema) as JsonSchema;
}

const toSchema = (schema: z.ZodMiniType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema =>
  hoist(z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema, components);

function parameters(route: Route, components: Record<string, JsonSchema>): JsonSchema[] {
  const list: JsonSchema[] = [];
  for (const [location, object] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    for (const [name, field] of Object.entries(object.shape as Record<string, z.ZodMiniType>)) {
      const schema = toSchema(field, 'input', components);
      const { description, ...rest } = schema;
      list.push({
        name,
        in: location,
        required: location === 'path' || !field.safeParse(undefined).success,
        ...(typeof description === 'string' ? { description } : {}),
        schema: rest,
      });
    }
  }
  return list;
}

interface OpenApiOptions {
  title?: string;
  version?: string;
  serverUrl?: string;
}

export function buildOpenApiDocument(routes: readonly Route[], opts: OpenApiOptions = {}): JsonSchema {
  const components: Record<string, JsonSchema> = {};
  const errorRef = toSchema(errorSchema, 'output', components);
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const responses: Record<string, JsonSchema> = {
      [String(route.status)]: {
        description: route.status === 201 ? 'Created' : route.status === 202 ? 'Accepted' : 'OK',
        content: { [route.mediaType ?? 'application/json']: { schema: toSchema(route.response, 'output', components) } },
      },
    };
    for (const [status, answer] of Object.entries(route.otherAnswers ?? {})) {
      responses[status] = {
        description: answer.description,
        ...(answer.headers ? { headers: Object.fromEntries(answer.headers.map((h) => [h, { schema: { type: 'string' } }])) } : {}),
        ...(answer.content ? { content: Object.fromEntries(answer.content.map((type) => [type, { schema: { type: 'string' } }])) } : {}),
      };
    }
    for (const status of route.errors) {
      if (status === 401 && !route.authenticated) continue;
      responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
    }
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(route.accessPatterns ? { 'x-access-patterns': route.accessPatterns } : {}),
      security: route.authenticated ? [{ apiKey: [] }] : [],
      parameters: parameters(route, components),
      ...(route.body
        ? {
            requestBody: {
              required: !route.body.safeParse(undefined).success,
              content: { 'application/json': { schema: toSchema(route.body, 'input', components) } },
            },
          }
        : {}),
      responses,
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  const errorResponses = Object.fromEntries(
    (Object.keys(ERROR_DESCRIPTIONS) as unknown as ErrorStatus[]).map((status) => [
      `Error${status}`,
      {
        description: ERROR_DESCRIPTIONS[status],
        ...(Number(status) === 429
          ? {
              headers: {
                'Retry-After': {
                  description: 'Whole seconds to wait before the next request (rate_limited).',
                  schema: { type: 'integer', minimum: 1 },
                },
              },
            }
          : {}),
        content: { 'application/json': { schema: errorRef } },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: opts.title ?? 'IceCatWrangler API',
      version: opts.version ?? '1',
      description:
        'Upload images in batches and learn which show a cat. Times are ISO-8601 UTC; `from`/`to` also take epoch ' +
        'seconds. Lists page with an opaque `cursor` (absent on the last page), valid only with the same filters.',
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <key>.' } },
      schemas: components,
      responses: errorResponses,
    },
  };
}
