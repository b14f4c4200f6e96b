// Bad networks for the clients: a slow uplink to the local S3, an API whose upload forms live a few seconds, and an
// API whose answer to one request is lost. The short-lived forms come from a second API front end (the real handlers,
// in this test's process) over the global stack's S3, DynamoDB and queue, configured as a deployment would be,
// through its environment: the forms it signs name the slow S3 endpoint and expire after UPLOAD_EXPIRES_SECONDS.
import { createServer, request, type Server } from 'node:http';
import path from 'node:path';
import { loadApiFunctions, templateApiRouting } from '../../local/gateway/api-functions';
import { startHttpGateway } from '../../local/gateway/gateway';
import { listen } from '../../local/listen';
import { stackIam } from '../../local/stack/iam';
import { startLocalJobQueues } from '../../local/stack/job-queues';

const ROOT = path.join(__dirname, '..', '..');

export interface SlowS3 {
  url: string;
  close(): Promise<void>;
}

/** Forwards every request to `target` once it has waited `delayMs` (the bytes' time on a slow line). */
export async function startSlowS3(target: string, delayMs: number): Promise<SlowS3> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        const upstream = request(
          { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(Buffer.concat(chunks));
      }, delayMs);
    });
  });
  // The stand-ins' own binding: a free loopback port; closing drops every connection at once.
  return listen(server, '127.0.0.1', 0, { graceMs: 0 });
}

export interface ApiFrontEnd {
  url: string;
  close(): Promise<void>;
}

/**
 * The API's functions loaded with `env` on top of the global stack's environment, behind a gateway of their own.
 * `env` stays on process.env until close(): some handlers read it per request (the web app's CSP names the S3 origin).
 */
export async function startApiFrontEnd(env: Record<string, string>): Promise<ApiFrontEnd> {
  const previous = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const restore = () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  Object.assign(process.env, env);
  try {
    // The handlers read their configuration when built; the batches function's queues are this front end's own.
    const iam = stackIam();
    const jobs = await startLocalJobQueues(ROOT, iam);
    const handlers = await loadApiFunctions(ROOT, jobs, iam);
    const gateway = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      ...(await templateApiRouting(ROOT, () => handlers)),
      log: () => undefined,
    });
    return {
      url: gateway.url,
      close: async () => {
        await gateway.close();
        jobs.close();
        restore();
      },
    };
  } catch (err) {
    restore();
    throw err;
  }
}

export interface LossyApi {
  url: string;
  close(): Promise<void>;
}

/**
 * A proxy to the API that loses the answer to the first request of `method path`: the API handles it, then the
 * connection drops before the client reads a byte (a timeout on a bad line, seen from the client).
 */
export async function startLossyApi(target: string, method: string, pathname: string): Promise<LossyApi> {
  const to = new URL(target);
  let lost = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const upstream = request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
        (answer) => {
          if (!lost && req.method === method && new URL(req.url ?? '/', target).pathname === pathname) {
            lost = true;
            answer.resume();
            answer.on('end', () => res.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  // The stand-ins' own binding: a free loopback port; closing drops every connection at once.
  return listen(server, '127.0.0.1', 0, { graceMs: 0 });
}
