// The bridge's status over HTTP, for tests, benches and `npm run dead-letters` in other processes.
import { createServer, type Server } from 'node:http';
import type { DiskState } from '../disk-space';
import { listen } from '../listen';
import type { QueueStats } from '../queue/options';
import type { LocalQueue } from '../queue/queue';
import { carriesToken } from './control-token';
import { dimensionLabel, type MetricTotalsSnapshot } from './metric-totals';

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
  /** The data dir's space and the writes refused for lack of it, shown by GET /status. */
  disk?: () => DiskState;
  /** What the control routes (every POST) want as `Authorization: Bearer <token>` (control-token.ts). */
  controlToken: string;
}

const PATHS = 'GET /status, /status.html, /idle?timeoutMs=, /dead-letters; POST /dead-letters/redrive, /reconcile, /pause, /resume';

/**
 * GET /status → the queue's stats and the ingest's metric totals, as JSON, or as a page for a browser (Accept:
 * text/html, or /status.html); GET /idle?timeoutMs=N → 200 once idle, 504 if not within N ms;
 * GET /dead-letters → the dead-letter list; POST /dead-letters/redrive → sends them back to the queue;
 * POST /reconcile → a reconciliation sweep now, and its result.
 * POST /pause, POST /resume → hold the queue's deliveries (sends are still accepted), and deliver again.
 * Every POST wants the control token (401 without it); the GET routes only read.
 */
export async function startBridgeStatusServer(queue: LocalQueue, opts: BridgeStatusOptions): Promise<BridgeStatusServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const route = `${req.method} ${url.pathname}`;
    // The control routes act on every client's work: only the operator's commands, holding the data dir's token.
    if (req.method === 'POST' && !carriesToken(req.headers.authorization, opts.controlToken)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="icecat-bridge"' });
      res.end(JSON.stringify({ error: "the bridge's control routes need the data dir's control token (Authorization: Bearer …)" }));
      return;
    }
    if (route === 'POST /dead-letters/redrive') return reply(200, { redriven: queue.redrive() });
    // Hold the queue (uploads are still accepted and journaled) and let it deliver again: e.g. to change a client's
    // quota while its uploads wait (docs/design.md §11).
    if (route === 'POST /pause') {
      queue.pause();
      return reply(200, queue.stats());
    }
    if (route === 'POST /resume') {
      queue.resume();
      return reply(200, queue.stats());
    }
    if (route === 'POST /reconcile' && opts.reconcile) {
      opts.reconcile().then(
        (result) => reply(200, result),
        (err: unknown) => reply(500, { error: String(err) }),
      );
      return;
    }
    if (route === 'GET /status' || route === 'GET /status.html') {
      // paused and deadLetters (held now) say, with disk, why nothing moves (`icecat upload --wait` reads them).
      const status = {
        ...queue.stats(),
        paused: queue.isPaused(),
        deadLetters: queue.retained().deadLetters,
        ...(opts.metrics ? { metrics: opts.metrics() } : {}),
        ...(opts.disk ? { disk: opts.disk() } : {}),
      };
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

const mib = (bytes: number | undefined): string => (bytes === undefined ? 'unknown' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);

/** The data dir's state: a warning first when a write was refused for lack of space, or the space is low. */
function diskSection(disk: DiskState): string {
  const verdict = disk.full
    ? '<p id="disk-full" class="alarm"><strong>Out of disk space:</strong> writes are refused (S3 InternalError, DynamoDB ' +
      'InternalServerError) and uploads wait under uploads/; free some space and they are handled.</p>'
    : disk.low
      ? '<p id="disk-low" class="warn"><strong>Disk space is low.</strong></p>'
      : '';
  const faults = disk.faults
    .map((f) => `<tr>${cell(f.service)}${cell(f.since)}${cell(f.last)}${cell(f.count)}${cell(f.message)}</tr>`)
    .join('\n');
  return `<h2>Disk</h2>
${verdict}
<table id="disk"><tr>${cell('data dir')}${cell(disk.dataDir)}</tr><tr>${cell('free')}${cell(`${mib(disk.freeBytes)} of ${mib(disk.totalBytes)}`)}</tr></table>
${faults ? `<table id="disk-faults"><tr><th>service</th><th>refusing since</th><th>last</th><th>writes refused</th><th>error</th></tr>\n${faults}\n</table>` : ''}`;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const cell = (value: unknown): string => `<td>${escapeHtml(value === undefined ? '' : String(value))}</td>`;

/** The status as a page: the queue's counters, then one row per metric and dimension set. */
export function statusPage(
  status: QueueStats & { paused?: boolean; deadLetters?: number; metrics?: MetricTotalsSnapshot; disk?: DiskState },
): string {
  const { metrics, journal, disk, ...counters } = status;
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
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}.alarm{color:#a00}.warn{color:#a60}</style>
</head><body>
<h1>Local bridge (S3 uploads → SQS → ingest)</h1>
${disk ? diskSection(disk) : ''}<h2>Queue</h2>
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
