// The ingest's metrics on a running `npm start`: its EMF lines in the stack's log, and their totals on the bridge's
// status page (JSON and HTML), after uploads that succeed, repeat in the batch, fail, and repeat in a later batch.

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { MetricTotal, MetricTotalsSnapshot } from '../../local/bridge/metric-totals';
import { tempDataDir } from '../helpers';
import { distinctImages, type StackProcess, seededRandom, startStackProcess } from '../helpers/stack-process';

jest.setTimeout(240_000);

let stack: StackProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDataDir('icecat-metrics-');
  stack = await startStackProcess(dataDir, path.join(dataDir, 'stack.log'), { ICECAT_RECONCILE_INTERVAL_SECONDS: '600' });
});

afterAll(async () => {
  if (stack) {
    stack.signal('SIGTERM');
    await stack.exited;
    stack.s3.destroy();
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function put(key: string, body: Buffer | string): Promise<void> {
  await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body }));
}

async function idle(): Promise<void> {
  const res = await fetch(`${stack.bridgeUrl}/idle?timeoutMs=120000`);
  expect(res.status).toBe(200);
}

const find = (totals: MetricTotal[], metric: string, dimensions: Record<string, string> = {}): MetricTotal | undefined =>
  totals.find((t) => t.metric === metric && Object.entries(dimensions).every(([name, value]) => t.dimensions[name] === value));

const sumOf = (totals: MetricTotal[], metric: string, dimensions?: Record<string, string>): number =>
  find(totals, metric, dimensions)?.sum ?? 0;

it('totals images by outcome and error code, DetectLabels calls, calls saved and step latencies', async () => {
  const [a, b, c] = await distinctImages(3, seededRandom(11));
  // Batch 1: three distinct photos, one of them twice, and a file that is no image.
  await put('uploads/demo/metrics-1/a.png', a as Buffer);
  await put('uploads/demo/metrics-1/b.png', b as Buffer);
  await put('uploads/demo/metrics-1/c.png', c as Buffer);
  await put('uploads/demo/metrics-1/a-again.png', a as Buffer);
  await put('uploads/demo/metrics-1/notes.png', 'not an image at all');
  await idle();
  // Batch 2: a photo the client had classified in batch 1.
  await put('uploads/demo/metrics-2/b-later.png', b as Buffer);
  await idle();

  const res = await fetch(`${stack.bridgeUrl}/status`);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  const status = (await res.json()) as { processed?: number; metrics: MetricTotalsSnapshot };
  const { totals } = status.metrics;

  expect(sumOf(totals, 'Images', { Outcome: 'success' })).toBe(4);
  expect(sumOf(totals, 'Images', { Outcome: 'duplicate' })).toBe(1);
  expect(sumOf(totals, 'Images', { Outcome: 'fail', ErrorCode: 'NotAnImage' })).toBe(1);
  expect(sumOf(totals, 'DetectLabelsCalls')).toBe(3);
  expect(sumOf(totals, 'CallsSavedByDuplicates')).toBe(1);
  expect(sumOf(totals, 'CallsSavedByReuse')).toBe(1);
  // Every upload is read; the reused one is "detected" (looked up) too.
  const read = find(totals, 'ReadLatency');
  expect(read).toMatchObject({ unit: 'Milliseconds', count: 6 });
  expect(read?.p95).toBeGreaterThanOrEqual(read?.p50 as number);
  expect(read?.max).toBeGreaterThanOrEqual(read?.p95 as number);
  expect(find(totals, 'DetectLatency')?.count).toBe(4);
  for (const step of ['Fingerprint', 'Claim', 'Record', 'Move']) expect(find(totals, `${step}Latency`)?.count).toBeGreaterThan(0);

  // The same totals as a page for a browser.
  const page = await fetch(`${stack.bridgeUrl}/status`, { headers: { accept: 'text/html' } });
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  const html = await page.text();
  expect(html).toMatch(/<tr><td>DetectLabelsCalls<\/td><td><\/td><td>Count<\/td><td>3<\/td><td>3<\/td>/);
  expect(html).toMatch(/<tr><td>Images<\/td><td>Outcome=fail ErrorCode=NotAnImage<\/td><td>Count<\/td><td>1<\/td>/);
  expect(html).toContain('<td>CallsSavedByReuse</td>');

  // The EMF lines are in the stack's log, as CloudWatch would read them, and add up to the same call count.
  const emf = readFileSync(path.join(dataDir, 'stack.log'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(emf.length).toBe(status.metrics.documents);
  const calls = emf.flatMap((doc) => [doc.DetectLabelsCalls ?? []].flat() as number[]).reduce((x, y) => x + y, 0);
  expect(calls).toBe(3);
});
