// The HTTP API as the template deploys it: serverless.yml's httpApi events read into route keys and function
// timeouts, and API Gateway's route selection (most specific route, greedy variables below, then $default).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_FUNCTION_TIMEOUT_SECONDS,
  functionTimeoutMs,
  type HttpApiRoute,
  matchRoute,
  routesFromTemplate,
  TemplateRouteError,
  templateFromServerlessYaml,
} from '../../local/gateway/routes';
import { loadJobConsumerLimits } from '../../local/stack/job-queues';

const ROOT = path.join(__dirname, '..', '..');
const serverlessYaml = readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');

describe("reading the template's routes and timeouts", () => {
  it('reads every httpApi event as its route key, `*` as $default, each with its function', () => {
    const template = templateFromServerlessYaml(`
provider:
  timeout: 12
custom:
  slow: 20
functions:
  a:
    timeout: \${self:custom.slow}
    events:
      - httpApi: GET /v1/things/{id}
      - httpApi: { method: '*', path: '/v1/{proxy+}' }
      - sqs: arn
  b:
    events:
      - httpApi: '*'
`);

    expect(template).toEqual({
      routes: [
        { routeKey: 'GET /v1/things/{id}', method: 'GET', path: '/v1/things/{id}', functionName: 'a' },
        { routeKey: 'ANY /v1/{proxy+}', method: 'ANY', path: '/v1/{proxy+}', functionName: 'a' },
        { routeKey: '$default', method: 'ANY', functionName: 'b' },
      ],
      functions: [
        { name: 'a', timeoutSeconds: 20 },
        { name: 'b', timeoutSeconds: 12 },
      ],
    });
  });

  it("gives a function with no timeout, under a provider with none, the framework's 6 s", () => {
    expect(templateFromServerlessYaml('functions:\n  f:\n    handler: x.handler\n').functions).toEqual([
      { name: 'f', timeoutSeconds: DEFAULT_FUNCTION_TIMEOUT_SECONDS },
    ]);
  });

  it.each([
    ['an unknown method', 'functions:\n  f:\n    events:\n      - httpApi: FETCH /x\n'],
    ['a route declared twice', 'functions:\n  f:\n    events:\n      - httpApi: GET /x\n      - httpApi: GET /x\n'],
    ['an unresolvable timeout', 'functions:\n  f:\n    timeout: ${self:custom.none}\n'],
  ])('refuses %s', (_, yaml) => {
    expect(() => templateFromServerlessYaml(yaml)).toThrow(TemplateRouteError);
  });

  it("reads this project's functions with their deployed timeouts", () => {
    const template = templateFromServerlessYaml(serverlessYaml);

    expect(['ingest', 'route', 'api', 'batches', 'erase', 'callbacks'].map((name) => functionTimeoutMs(template, name))).toEqual([
      120_000, 30_000, 10_000, 10_000, 900_000, 30_000,
    ]);
  });

  it("holds the erase and callbacks consumers to their functions' timeouts and their queues' redelivery", async () => {
    expect(await loadJobConsumerLimits(ROOT)).toEqual({
      erase: { timeoutMs: 900_000, visibilityTimeoutMs: 5_400_000, maxReceiveCount: 5 },
      callbacks: { timeoutMs: 30_000, visibilityTimeoutMs: 180_000, maxReceiveCount: 5 },
    });
  });
});

describe("API Gateway's route selection", () => {
  const route = (routeKey: string): HttpApiRoute => {
    if (routeKey === '$default') return { routeKey, method: 'ANY', functionName: 'f' };
    const [method = '', routePath] = routeKey.split(' ');
    return { routeKey, method, path: routePath as string, functionName: 'f' };
  };
  // AWS's example (Developer Guide, "Routing API requests"), with $default.
  const routes = ['GET /pets/dog/1', 'GET /pets/dog/{id}', 'GET /pets/{proxy+}', 'ANY /{proxy+}', '$default'].map(route);
  const selected = (method: string, rawPath: string) => {
    const m = matchRoute(routes, method, rawPath);
    return m && { routeKey: m.route.routeKey, ...(m.pathParameters ? { pathParameters: m.pathParameters } : {}) };
  };

  it.each([
    ['GET', '/pets/dog/1', { routeKey: 'GET /pets/dog/1' }],
    ['GET', '/pets/dog/2', { routeKey: 'GET /pets/dog/{id}', pathParameters: { id: '2' } }],
    ['GET', '/pets/cat/1', { routeKey: 'GET /pets/{proxy+}', pathParameters: { proxy: 'cat/1' } }],
    ['POST', '/pets/dog/1', { routeKey: 'ANY /{proxy+}', pathParameters: { proxy: 'pets/dog/1' } }],
    ['GET', '/', { routeKey: '$default' }],
  ])('selects for %s %s the most specific route', (method, rawPath, expected) => {
    expect(selected(method, rawPath)).toEqual(expected);
  });

  it('fills a variable with its whole segment, custom method and all, decoded', () => {
    const m = matchRoute([route('POST /v1/batches/{batchId}')], 'POST', '/v1/batches/b%201:close');

    expect(m?.pathParameters).toEqual({ batchId: 'b 1:close' });
  });

  it('prefers a route with the method itself to ANY on the same path', () => {
    const m = matchRoute([route('ANY /x/{id}'), route('GET /x/{id}')], 'GET', '/x/1');

    expect(m?.route.routeKey).toBe('GET /x/{id}');
  });

  it('matches a variable only to a non-empty segment, and nothing when the template has no $default', () => {
    const only = [route('GET /v1/batches/{batchId}')];

    expect([
      matchRoute(only, 'GET', '/v1/batches/'),
      matchRoute(only, 'GET', '/v1/batches/b1/images'),
      matchRoute(only, 'PUT', '/v1/batches/b1'),
    ]).toEqual([undefined, undefined, undefined]);
  });

  it("routes every request of this project's template somewhere: $default takes what no route matches", () => {
    expect(matchRoute(routesFromTemplate(serverlessYaml), 'PATCH', '/nowhere')?.route).toEqual({
      routeKey: '$default',
      method: 'ANY',
      functionName: 'api',
    });
  });
});
