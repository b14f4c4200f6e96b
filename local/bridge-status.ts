// The bridge's status over HTTP, for tests, benches and `npm run dead-letters` in other processes.
import { createServer, type Server } from 'node:http';
import { listen } from './listen';
import { dimensionLabel, type MetricTotalsSnapshot } from './metric-totals';
import type { LocalQueue, QueueStats } from './queue';

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
  /** The totals of the ingest's metrics (EMF), shown by GET /status. */
  metrics?: () => MetricTotalsSnapshot;
}

const PATHS = 'GET /status, /status.html, /idle?timeoutMs=, /dead-letters; POST /dead-letters/redrive, /reconcile';

/**
 * GET /status → the queue's stats and the ingest's metric totals, as JSON, or as a page for a browser (Accept:
 * text/html, or /status.html); GET /idle?timeoutMs=N → 200 once idle, 504 if not within N ms;
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
    if (route === 'GET /status' || route === 'GET /status.html') {
      const status = { ...queue.stats(), ...(opts.metrics ? { metrics: opts.metrics() } : {}) };
      const accept = req.headers.accept ?? '';
      if (url.pathname === '/status.html' || (accept.includes('text/html') && !accept.includes('application/json'))) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(statusPage(status));
        return;
      }
      return reply(200, status);
    }
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

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const cell = (value: unknown): string => `<td>${escapeHtml(value === undefined ? '' : String(value))}</td>`;

/** The status as a page: the queue's counters, then one row per metric and dimension set. */
export function statusPage(status: QueueStats & { metrics?: MetricTotalsSnapshot }): string {
  const { metrics, journal, ...counters } = status;
  const queueRows = Object.entries({ ...counters, ...(journal ? { journal: JSON.stringify(journal) } : {}) })
    .map(([name, value]) => `<tr>${cell(name)}${cell(value)}</tr>`)
    .join('\n');
  const metricRows = (metrics?.totals ?? [])
    .map(
      (t) =>
        `<tr>${cell(t.metric)}${cell(dimensionLabel(t))}${cell(t.unit)}${cell(t.count)}${cell(t.sum)}` +
        `${cell(t.avg)}${cell(t.p50)}${cell(t.p95)}${cell(t.max)}</tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>IceCatWrangler local bridge</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}</style>
</head><body>
<h1>Local bridge (S3 uploads → SQS → ingest)</h1>
<h2>Queue</h2>
<table id="queue"><tr><th>counter</th><th>value</th></tr>
${queueRows}
</table>
<h2>Ingest metrics (CloudWatch EMF, since the stack started)</h2>
<p>${metrics ? `${metrics.documents} EMF documents` : 'not collected'}</p>
<table id="metrics"><tr><th>metric</th><th>dimensions</th><th>unit</th><th>count</th><th>sum</th><th>avg</th><th>p50</th><th>p95</th><th>max</th></tr>
${metricRows}
</table>
</body></html>
`;
}
