import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildOpenApiDocument } from '../../lib/api/openapi';
import { apiRoutes } from '../../lib/api/routes';

const LIMITS = { maxRetentionDays: 365, defaultRetentionDays: 30, maxFilesPerBatch: 500, maxUploadBytes: 50 * 1024 * 1024 };
const routes = apiRoutes(LIMITS);
const doc = buildOpenApiDocument(routes) as {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters: { name: string; in: string; required: boolean }[];
        responses: Record<string, unknown>;
        requestBody?: unknown;
        security: unknown[];
      }
    >
  >;
  components: { schemas: Record<string, unknown> };
};
/**
 * The validator is ESM-only; jest runs CommonJS, so it runs in a plain node process, which imports ESM natively.
 */
async function validateOpenApi(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const script =
    "import('@seriousme/openapi-schema-validator').then(async ({ Validator }) => {" +
    ' const r = await new Validator().validate(JSON.parse(process.argv[1]));' +
    ' process.stdout.write(JSON.stringify({ valid: r.valid, ...(r.valid ? {} : { errors: r.errors }) })); })';
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, JSON.stringify(document)], { cwd: __dirname });
  return JSON.parse(stdout) as { valid: boolean; errors?: unknown };
}

const operation = (method: string, path: string) => doc.paths[path]?.[method] as (typeof doc.paths)[string][string];

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validateOpenApi(doc);

    expect(result).toEqual({ valid: true });
  });

  it('the validator rejects a document with a dangling reference (it does check)', async () => {
    const broken = structuredClone(doc);
    (broken.paths['/v1/images']!.get!.responses as Record<string, unknown>)['200'] = { $ref: '#/components/responses/Nope' };

    const result = await validateOpenApi(broken);

    expect(result.valid).toBe(false);
  });

  it('describes every route of docs/design.md §3', () => {
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

    expect(described.sort()).toEqual(
      [
        'POST /v1/batches',
        'GET /v1/batches',
        'POST /v1/batches/{batchId}/uploads',
        'POST /v1/batches/{batchId}:close',
        'POST /v1/batches/{batchId}:reclassify',
        'POST /v1/batches/{batchId}:redetect',
        'POST /v1/batches/{batchId}:retry',
        'GET /v1/batches/{batchId}/report',
        'GET /v1/batches/{batchId}/changes',
        'GET /v1/batches/{batchId}',
        'GET /v1/batches/{batchId}/images',
        'GET /v1/batches/{batchId}/images/{fprint}',
        'POST /v1/batches/{batchId}/images:batchGet',
        'GET /v1/batches/{batchId}/logs',
        'GET /v1/batches/{batchId}/export',
        'GET /v1/batches/{batchId}/similar',
        'DELETE /v1/batches/{batchId}',
        'PUT /v1/batches/{batchId}/images/{fprint}/review',
        'DELETE /v1/batches/{batchId}/images/{fprint}/review',
        'GET /v1/batches/{batchId}/agreement',
        'POST /v1/batches/{batchId}/audit',
        'GET /v1/batches/{batchId}/accuracy',
        'GET /v1/images',
        'POST /v1/fingerprints:known',
        'GET /v1/openapi.json',
        'GET /v1/usage',
        'GET /',
        'GET /app/{asset}',
      ].sort(),
    );
  });

  it('describes exactly the routes the handler serves', () => {
    expect(Object.values(doc.paths).flatMap((ops) => Object.keys(ops)).length).toBe(routes.length);
  });

  it('lists every query parameter of GET /v1/images', () => {
    const names = operation('get', '/v1/images')
      .parameters.filter((p) => p.in === 'query')
      .map((p) => p.name);

    expect(names.sort()).toEqual(['cat', 'cursor', 'fprint', 'from', 'limit', 'status', 'to']);
  });

  it('marks path parameters required and query parameters optional', () => {
    const params = operation('get', '/v1/batches/{batchId}/images').parameters;

    expect(params.find((p) => p.name === 'batchId')).toMatchObject({ in: 'path', required: true });
    expect(params.filter((p) => p.in === 'query').every((p) => !p.required)).toBe(true);
  });

  it('documents the request bodies', () => {
    expect(operation('post', '/v1/batches').requestBody).toBeDefined();
    expect(operation('post', '/v1/batches/{batchId}/images:batchGet').requestBody).toBeDefined();
  });

  it('documents 401 on every authenticated route', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.security.length === 0) continue;
        expect([`${method} ${path}`, Object.keys(op.responses)]).toEqual([
          `${method} ${path}`,
          expect.arrayContaining(['400', '401', '500']),
        ]);
      }
    }
  });

  it('documents 404 on every batch route', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.includes('{batchId}')) continue;
      for (const op of Object.values(ops)) expect(Object.keys(op.responses)).toContain('404');
    }
  });

  it('documents 413 for an oversized declared file', () => {
    expect(Object.keys(operation('post', '/v1/batches').responses)).toContain('413');
  });

  it('names the response shapes as components', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Image', 'ImageList', 'BatchSummary', 'CreatedBatch', 'LogList', 'BatchGetResult', 'Error']),
    );
  });

  it('serves itself without authentication', () => {
    expect(operation('get', '/v1/openapi.json').security).toEqual([]);
  });

  it('serves the web app without authentication, as HTML (the page signs in itself)', () => {
    const page = operation('get', '/') as unknown as {
      security: unknown[];
      responses: Record<string, { content: Record<string, unknown> }>;
    };

    expect([page.security, Object.keys(page.responses['200']?.content ?? {})]).toEqual([[], ['text/html']]);
  });

  it('keeps every /v1 route behind the API key except the document itself', () => {
    const open = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security.length === 0)
        .map(([m]) => `${m.toUpperCase()} ${path}`),
    );

    expect(open.sort()).toEqual(['GET /', 'GET /app/{asset}', 'GET /v1/openapi.json']);
  });
});
