// X-Ray tracing through Powertools' Tracer (docs/operations.md, "Traces"): the container's one tracer, the AWS SDK
// clients captured where they are built (clients.ts), each handler a `## handler` subsegment and each piece of work on
// a client's batch a subsegment annotated with clientId and batchId, so one upload's path (route → ingest → S3,
// DynamoDB, Rekognition) is one trace, found by either annotation.
// The tracer traces only inside Lambda with tracing on (AWS_EXECUTION_ENV set, POWERTOOLS_TRACE_ENABLED not "false",
// lib/config.ts loadTracingSettings), as each function's handler says first thing (startTracing), before it builds a
// client: the local stack, the tests and the benches run without X-Ray, and everything here is then a pass-through — the
// same client, the same handler, no segment, no error, no log line. There the Tracer is not even loaded: its X-Ray SDK
// turns on async hooks (cls-hooked) when imported, and every promise of the process then pays for them, traced or not
// (docs/decisions/0034-tracer-loaded-only-where-it-traces.md).
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { TracingSettings } from '../config';

let tracer: Tracer | undefined;
let handlerName = 'handler';

/**
 * The container's tracer, started by the function's handler module before it builds anything (clients built earlier
 * are not captured). Off, nothing is loaded; a second call (the local stack loads several handlers) changes nothing.
 */
export function startTracing(settings: TracingSettings): void {
  if (tracer || !settings.on) return;
  handlerName = settings.handlerName;
  // A require, not an import: loaded only where it traces; esbuild bundles it all the same (cjs).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  tracer = new (require('@aws-lambda-powertools/tracer') as typeof import('@aws-lambda-powertools/tracer')).Tracer({
    serviceName: 'icecat-wrangler',
  });
}

/** Whether this process traces (the Tracer loaded and on). */
export const tracingEnabled = (): boolean => tracer?.isTracingEnabled() ?? false;

/** Where a piece of work belongs: the annotations a trace is searched by (`annotation.clientId = "…"`). */
export interface TraceKeys {
  clientId?: string | undefined;
  batchId?: string | undefined;
}

/** An AWS SDK v3 client whose every call is a subsegment of the current trace; the client itself when not tracing. */
export const traced = <C>(client: C): C => (tracer?.isTracingEnabled() ? tracer.captureAWSv3Client(client) : client);

interface Subsegment {
  addAnnotation(key: string, value: string | number | boolean): void;
  addError(error: Error): void;
  close(): void;
}

/** Runs `work` in a subsegment of its own (its own async context: concurrent ones do not mix) and closes it. */
function inSubsegment<T>(tracer: Tracer, name: string, work: (subsegment: Subsegment | undefined) => Promise<T>): Promise<T> {
  return tracer.provider.captureAsyncFunc(name, async (subsegment?: unknown) => {
    const sub = subsegment as Subsegment | undefined;
    try {
      return await work(sub);
    } catch (err) {
      sub?.addError(err as Error);
      throw err;
    } finally {
      sub?.close();
    }
  }) as Promise<T>;
}

function annotateOn(sub: Subsegment | undefined, keys: TraceKeys): void {
  if (keys.clientId) sub?.addAnnotation('clientId', keys.clientId);
  if (keys.batchId) sub?.addAnnotation('batchId', keys.batchId);
}

/**
 * The handler traced as Powertools' captureLambdaHandler traces it: a `## <handler>` subsegment with the ColdStart and
 * Service annotations, an error thrown recorded on it. The handler itself when not tracing.
 */
export function tracedHandler<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  const on = tracer;
  if (!on?.isTracingEnabled()) return handler;
  const name = handlerName;
  return (...args: A) =>
    inSubsegment(on, `## ${name}`, () => {
      on.annotateColdStart();
      on.addServiceNameAnnotation();
      return handler(...args);
    });
}

/** `work` on one client's batch as its own subsegment, annotated with both; `work` itself when not tracing. */
export function traceWork<T>(name: string, keys: TraceKeys, work: () => Promise<T>): Promise<T> {
  if (!tracer?.isTracingEnabled()) return work();
  return inSubsegment(tracer, `### ${name}`, (sub) => {
    annotateOn(sub, keys);
    return work();
  });
}

/** What names the client of an API request (lib/http's Authenticator). */
interface ClientAuthenticator {
  authenticate(authorization: string | undefined): Promise<string>;
}

/** An authenticator whose every client it names is annotated on the trace (the API functions' API key check). */
export function annotatingClient(authenticator: ClientAuthenticator): ClientAuthenticator {
  if (!tracer?.isTracingEnabled()) return authenticator;
  return {
    authenticate: async (authorization) => {
      const clientId = await authenticator.authenticate(authorization);
      annotate({ clientId });
      return clientId;
    },
  };
}

/** Annotates the current subsegment (the handler's) with what it now knows, e.g. the client an API key named. */
export function annotate(keys: TraceKeys): void {
  if (!tracer?.isTracingEnabled()) return;
  if (keys.clientId) tracer.putAnnotation('clientId', keys.clientId);
  if (keys.batchId) tracer.putAnnotation('batchId', keys.batchId);
}
