// Each function run from its unzipped artifact as the Lambda Node.js runtime runs it (moto's own Lambda execution
// needs Docker): one warm process per function, `require(handlerFile)[export](event, context)` per invocation, with
// the function's environment as moto's function configuration holds it plus what Lambda adds (its role's credentials,
// region, function name, memory, log group, the trace id per invocation); a run past the function's timeout is killed
// as Lambda's is. Only that environment and PATH reach it: nothing of the test process.
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export interface FunctionConfig {
  /** osls's name: ingest, api, … */
  name: string;
  functionName: string;
  handler: string;
  timeoutSeconds: number;
  memorySize: number;
  variables: Record<string, string>;
}

export interface Invocation<R> {
  ok: boolean;
  response?: R;
  error?: { errorType: string; errorMessage: string; stack?: string };
}

const RUNNER = `
const [handlerFile, exportName] = process.argv.slice(2);
let handler;
process.on('message', async (m) => {
  const deadline = Date.now() + m.timeoutMs;
  process.env._X_AMZN_TRACE_ID = m.traceId;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: m.functionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: m.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {}, fail() {}, succeed() {},
  };
  try {
    handler ??= require(handlerFile)[exportName];
    const response = await handler(m.event, context);
    process.send({ id: m.id, ok: true, response });
  } catch (err) {
    process.send({ id: m.id, ok: false, error: { errorType: err?.name ?? 'Error', errorMessage: String(err?.message ?? err), stack: err?.stack } });
  }
});
`;

export interface LambdaRuntime {
  invoke<R>(event: unknown): Promise<Invocation<R>>;
  /** Invocations so far. */
  count: number;
  /** The last of what the function wrote (its CloudWatch log on Lambda). */
  logTail(): string;
  stop(): void;
}

/** The environment Lambda gives the function: its configuration's variables, then the runtime's own. */
export function lambdaEnvironment(
  config: FunctionConfig,
  credentials: { accessKeyId: string; secretAccessKey: string },
  region: string,
  endpoint: string,
  dir: string,
): Record<string, string> {
  // Moto's queue URLs carry AWS's host (https://sqs.<region>.amazonaws.com/…), and the SQS client sends to the host of
  // the QueueUrl it is given: each is pointed at the endpoint, as on AWS a queue's URL is on its endpoint.
  const awsQueueHost = `https://sqs.${region}.amazonaws.com/`;
  const variables = Object.fromEntries(
    Object.entries(config.variables).map(([k, v]) => [k, v.startsWith(awsQueueHost) ? `${endpoint}/${v.slice(awsQueueHost.length)}` : v]),
  );
  return {
    ...variables,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: `session-of-${config.name}`,
    AWS_LAMBDA_FUNCTION_NAME: config.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(config.memorySize),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${config.functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `2026/12/01/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
    // X-Ray segments go to a loopback port nothing reads (Lambda's daemon is not the function's call).
    AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:9',
    LAMBDA_TASK_ROOT: dir,
    _HANDLER: config.handler,
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    // Every service at the recording proxy (moto behind it; the offline detector for Rekognition).
    AWS_ENDPOINT_URL: endpoint,
    // An IP endpoint has no virtual-hosted names (bucket.127.0.0.1 is no host): path-style, as for the local S3.
    S3_FORCE_PATH_STYLE: 'true',
  };
}

/** Starts the function's warm process in `dir` (its unzipped artifact). */
export function startLambda(config: FunctionConfig, dir: string, env: Record<string, string>, functionArn: string): LambdaRuntime {
  const dot = config.handler.lastIndexOf('.');
  const handlerFile = path.join(dir, `${config.handler.slice(0, dot)}.js`);
  const runner = path.join(dir, '.lambda-runtime.cjs');
  writeFileSync(runner, RUNNER);
  let child: ChildProcess | undefined;
  let log = '';
  const keep = (d: Buffer): void => {
    log = (log + d.toString()).slice(-16_000);
  };
  const pending = new Map<string, (inv: Invocation<unknown>) => void>();
  const spawnChild = (): ChildProcess => {
    const c = fork(runner, [handlerFile, config.handler.slice(dot + 1)], {
      cwd: dir,
      env,
      execArgv: [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    c.stdout?.on('data', keep);
    c.stderr?.on('data', keep);
    c.on('message', (m: Invocation<unknown> & { id: string }) => pending.get(m.id)?.(m));
    c.on('exit', (code) => {
      for (const resolve of pending.values())
        resolve({ ok: false, error: { errorType: 'Runtime.ExitError', errorMessage: `exited ${code}: ${log.slice(-4000)}` } });
      pending.clear();
      child = undefined;
    });
    return c;
  };
  const runtime: LambdaRuntime = {
    count: 0,
    logTail: () => log,
    invoke: <R>(event: unknown) => {
      runtime.count += 1;
      const proc = (child ??= spawnChild());
      const id = randomUUID();
      const timeoutMs = config.timeoutSeconds * 1000;
      return new Promise<Invocation<R>>((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          proc.kill('SIGKILL');
          resolve({
            ok: false,
            error: { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${config.timeoutSeconds} seconds` },
          });
        }, timeoutMs);
        pending.set(id, (inv) => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(inv as Invocation<R>);
        });
        const traceId = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Parent=${randomUUID().replace(/-/g, '').slice(0, 16)};Sampled=1`;
        proc.send({ id, event, timeoutMs, traceId, requestId: randomUUID(), functionArn });
      });
    },
    stop: () => child?.kill('SIGKILL'),
  };
  return runtime;
}
