// The HTTP API's Lambda functions, run in-process behind the local gateway. Each request goes to the function API
// Gateway would invoke for it: lib/api/routes.ts says which function serves each route (serverless.yml's routes are
// tested against the same table), and a request no route matches goes to the $default function.
import path from 'node:path';
import { API_FUNCTIONS, apiHandlerModule, functionFor, type ApiFunctionName } from '../lib/api/functions';
import { routeTargets } from '../lib/api/routes';
import type { BatchesWiring } from '../functions/batches/app';
import type { HttpApiHandler, HttpGatewayTarget } from './http-gateway';
import type { LocalIam } from './iam';
import { senderAs } from './iam-queues';
import { buildAs } from './iam-signing';

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

/** The batches function's queues, each as it sends to them (local/iam-queues.ts). */
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

/**
 * API Gateway's route selection for the local gateway: a request's method and path → the function's deployed-style
 * name (`<prefix>-api`) and its handler; 503 until `handlers()` has them.
 */
export function apiFunctionSelector(
  handlers: () => ApiFunctionHandlers | undefined,
  functionNamePrefix: string,
): (method: string, rawPath: string) => HttpGatewayTarget {
  const targets = routeTargets();
  return (method, rawPath) => {
    const name = functionFor(targets, method, rawPath);
    return { functionName: `${functionNamePrefix}-${name}`, handler: handlers()?.[name] ?? unavailable };
  };
}
