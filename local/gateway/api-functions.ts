// The HTTP API's Lambda functions, run in-process behind the local gateway. Each request goes to the function API
// Gateway would invoke for it: the one integrated by the route the gateway selects from serverless.yml's httpApi
// events (local/gateway/routes.ts), `$default` for a request no other route matches.
import path from 'node:path';
import type { BatchesWiring } from '../../functions/batches/app';
import { API_FUNCTIONS, type ApiFunctionName, apiHandlerModule } from '../../lib/api/functions';
import type { LocalIam } from '../iam/iam';
import { buildAs } from '../iam/signing';
import { senderAs } from '../queue/iam';
import type { HttpApiHandler, HttpGatewayTarget } from './gateway';
import { type HttpApiRoute, loadHttpApiTemplate, type TemplateFunction } from './routes';

export type ApiFunctionHandlers = Record<ApiFunctionName, HttpApiHandler>;

/**
 * Each API function's handler, as Lambda would run it (read their configuration once process.env is set): the
 * handler module of a function that needs no queue, the batches function built with the local queues it is given.
 */
export async function loadApiFunctions(root: string, wiring: BatchesWiring, iam: LocalIam): Promise<ApiFunctionHandlers> {
  // Each built as itself (its clients sign with its own key), the batches function sending as itself to its queues.
  const loaded = await Promise.all(
    API_FUNCTIONS.map((name) =>
      buildAs(name, async () => {
        if (name === 'batches') {
          const { createBatchesHandler } = (await import(path.join(root, 'functions', 'batches', 'app'))) as {
            createBatchesHandler(wiring: BatchesWiring): HttpApiHandler;
          };
          return [name, createBatchesHandler(batchesSending(iam, wiring))] as const;
        }
        const mod = (await import(path.join(root, apiHandlerModule(name)))) as { handler: HttpApiHandler };
        return [name, mod.handler] as const;
      }),
    ),
  );
  return Object.fromEntries(loaded) as ApiFunctionHandlers;
}

/** The batches function's queues, each as it sends to them (local/queue/iam.ts). */
const batchesSending = (iam: LocalIam, wiring: BatchesWiring): BatchesWiring => ({
  ...wiring,
  erasures: senderAs(iam, 'batches', 'erase', wiring.erasures),
  redetects: senderAs(iam, 'batches', 'uploads', wiring.redetects),
  callbacks: senderAs(iam, 'batches', 'callbacks', wiring.callbacks),
});

/** One handler standing in for every API function (a test's or a capture's own). */
export const oneHandlerForAll = (handler: HttpApiHandler): ApiFunctionHandlers =>
  Object.fromEntries(API_FUNCTIONS.map((name) => [name, handler])) as ApiFunctionHandlers;

const unavailable: HttpApiHandler = async () => ({
  statusCode: 503,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ error: { code: 'unavailable', message: 'the API handlers are not loaded yet' } }),
});

const isApiFunction = (name: string): name is ApiFunctionName => (API_FUNCTIONS as readonly string[]).includes(name);

/**
 * The function behind a template route for the local gateway: its deployed-style name (`<prefix>-api`), its handler
 * (503 until `handlers()` has it) and its template timeout (`functions`, from serverless.yml).
 */
export function apiFunctionTargets(
  handlers: () => ApiFunctionHandlers | undefined,
  functionNamePrefix: string,
  functions: readonly TemplateFunction[],
): (templateFunction: string) => HttpGatewayTarget {
  const timeouts = new Map(functions.map((f) => [f.name, f.timeoutSeconds * 1000]));
  return (name) => ({
    functionName: `${functionNamePrefix}-${name}`,
    handler: (isApiFunction(name) ? handlers()?.[name] : undefined) ?? unavailable,
    ...(timeouts.has(name) ? { timeoutMs: timeouts.get(name) } : {}),
  });
}

/** The gateway's routing as the template deploys it: serverless.yml's routes, each to its function with its timeout. */
export async function templateApiRouting(
  root: string,
  handlers: () => ApiFunctionHandlers | undefined,
  functionNamePrefix = 'icecat-wrangler-local',
): Promise<{ routes: HttpApiRoute[]; target: (templateFunction: string) => HttpGatewayTarget }> {
  const template = await loadHttpApiTemplate(root);
  return { routes: template.routes, target: apiFunctionTargets(handlers, functionNamePrefix, template.functions) };
}
