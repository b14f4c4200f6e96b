// The bridge's status over HTTP, for tests, benches and `npm run dead-letters` in other processes.
import { createServer, type Server } from 'node:http';
import { listen } from './listen';
import type { LocalQueue } from './queue';

export interface BridgeStatusServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface BridgeStatusOptions {
  host: string;
  port: number;
  /** Runs a reconciliation sweep now and answers its result (POST /reconcile). */
  reconcile?: () => Promise<unknown>;
}

const PATHS = 'GET /status, /idle?timeoutMs=, /dead-letters; POST /dead-letters/redrive, /reconcile';

/**
 * GET /status → stats; GET /idle?timeoutMs=N → 200 once idle, 504 if not within N ms;
 * GET /dead-letters → the dead-letter list; POST /dead-letters/redrive → sends them back to the queue;
 * POST /reconcile → a reconciliation sweep now, and its result.
 */
export async function startBridgeStatusServer(queue: LocalQueue, opts: BridgeStatusOptions): Promise<BridgeStatusServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const route = `${req.method} ${url.pathname}`;
    if (route === 'POST /dead-letters/redrive') return reply(200, { redriven: queue.redrive() });
    if (route === 'POST /reconcile' && opts.reconcile) {
      opts.reconcile().then(
        (result) => reply(200, result),
        (err: unknown) => reply(500, { error: String(err) }),
      );
      return;
    }
    if (route === 'GET /status') return reply(200, queue.stats());
    if (route === 'GET /dead-letters') return reply(200, { items: queue.deadLetters() });
    if (route === 'GET /idle') {
      const timeoutMs = Number(url.searchParams.get('timeoutMs') ?? 60_000);
      queue.whenIdle(timeoutMs).then(
        () => reply(200, queue.stats()),
        () => reply(504, queue.stats()),
      );
      return;
    }
    reply(404, { error: `unknown route ${route}: ${PATHS}` });
  });
  // Long polls on /idle would hold a graceful close: end them at once.
  return listen(server, opts.host, opts.port, { graceMs: 0 });
}
