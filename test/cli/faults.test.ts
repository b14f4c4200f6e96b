// Faults the local stack cannot produce on demand (a 503 that clears, a proxy's HTML page, a refused form, a
// server older than the CLI), served by a loopback HTTP server that answers as the API or S3 would.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiClient } from '../../lib/cli/api-client';
import { KeyRefusedError, NetworkError, RouteMissingError } from '../../lib/cli/errors';
import { postForm, UploadRefusedError } from '../../lib/cli/form-upload';
import { silentProgress } from '../../lib/cli/progress';
import { withRetry } from '../../lib/cli/retry';
import { waitUntilDone } from '../../lib/cli/wait';

type Answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

let server: Server;
let base: string;
let answers: Answer[];
let requests: { method: string; url: string; body: Buffer; headers: IncomingMessage['headers'] }[];
let dir: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      (answers.shift() ?? ((_q, r) => r.writeHead(500).end()))(req, res, body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(path.join(tmpdir(), 'icecat-faults-'));
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  answers = [];
  requests = [];
});

const jsonAnswer =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

const client = () => new ApiClient({ apiUrl: base, apiKey: 'key-1', retry: { attempts: 3, baseMs: 1, maxMs: 5 } });

describe('ApiClient against faults', () => {
  it('retries a 503 and returns the answer that follows, sending the bearer key', async () => {
    answers.push(jsonAnswer(503, { error: { code: 'unavailable', message: 'busy' } }), jsonAnswer(200, { batchId: 'b1' }));

    const summary = await client().getBatch('b1');

    expect(summary).toEqual({ batchId: 'b1' });
    expect(requests.map((r) => r.url)).toEqual(['/v1/batches/b1', '/v1/batches/b1']);
    expect(requests[0]?.headers.authorization).toBe('Bearer key-1');
  });

  it('retries a 429 throttle', async () => {
    answers.push(
      jsonAnswer(429, { error: { code: 'throttled', message: 'slow down' } }, { 'retry-after': '0' }),
      jsonAnswer(200, { batchId: 'b1' }),
    );

    await expect(client().getBatch('b1')).resolves.toEqual({ batchId: 'b1' });
  });

  it('turns 5xx that outlast the retries into a network error naming the API', async () => {
    answers.push(...Array.from({ length: 3 }, () => jsonAnswer(502, {})));

    await expect(client().getBatch('b1')).rejects.toThrow(NetworkError);
    expect(requests).toHaveLength(3);
  });

  it('turns a refused key into an authentication error without retrying', async () => {
    answers.push(jsonAnswer(401, { error: { code: 'unauthorized', message: 'invalid API key' } }));

    await expect(client().getBatch('b1')).rejects.toThrow(KeyRefusedError);
    expect(requests).toHaveLength(1);
  });

  it('names a route the server does not have, as the API documents it', async () => {
    answers.push(jsonAnswer(404, { error: { code: 'not_found', message: 'no route GET /v1/batches/b1/export' } }));

    const err = await client()
      .fetch('GET', '/v1/batches/b1/export')
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(RouteMissingError);
    expect((err as Error).message).toBe(
      'this API does not offer GET /v1/batches/{batchId}/export yet (route not found): it needs a newer IceCatWrangler server',
    );
  });

  it('keeps the API’s own code and message for other errors, and the status for a page that is not JSON', async () => {
    answers.push(jsonAnswer(404, { error: { code: 'not_found', message: 'batch b1 not found' } }));
    answers.push((_req, res) => res.writeHead(403, { 'content-type': 'text/html' }).end('<html>denied</html>'));

    await expect(client().getBatch('b1')).rejects.toMatchObject({ status: 404, code: 'not_found', message: 'batch b1 not found' });
    await expect(client().getBatch('b1')).rejects.toEqual(expect.objectContaining({ status: 403, message: 'HTTP 403 Forbidden' }));
  });
});

describe('postForm against faults', () => {
  const file = () => {
    const p = path.join(dir, 'cat.jpg');
    writeFileSync(p, Buffer.alloc(3000, 7));
    return p;
  };
  const form = () => ({
    file: 'trip/cat.jpg',
    url: `${base}/bucket`,
    fields: { key: 'uploads/c/b/trip/cat.jpg', Policy: 'p', 'Content-Type': 'image/jpeg' },
  });

  it('sends the fields, then the file with its length, and retries an S3 SlowDown', async () => {
    const slowDown: Answer = (_q, r) =>
      r.writeHead(503).end('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
    answers.push(slowDown, (_q, r) => r.writeHead(204).end());

    await withRetry(() => postForm(form(), file(), 'image/jpeg', 3000), { attempts: 3, baseMs: 1, maxMs: 2 });

    expect(requests).toHaveLength(2);
    const sent = requests[1]!;
    expect(Number(sent.headers['content-length'])).toBe(sent.body.length);
    const text = sent.body.toString('latin1');
    expect(text.indexOf('name="key"')).toBeLessThan(text.indexOf('name="file"'));
    expect(text).toMatch(/name="file"; filename="cat.jpg"\r\nContent-Type: image\/jpeg/);
    expect(sent.body.length).toBeGreaterThan(3000);
  });

  it('does not retry a refused policy, reporting S3’s code and message', async () => {
    answers.push((_q, r) => r.writeHead(403).end('<Error><Code>AccessDenied</Code><Message>Policy expired</Message></Error>'));

    const run = withRetry(() => postForm(form(), file(), 'image/jpeg', 3000), { attempts: 3, baseMs: 1, maxMs: 2 });

    await expect(run).rejects.toEqual(new UploadRefusedError('Policy expired', { status: 403, code: 'AccessDenied' }));
    expect(requests).toHaveLength(1);
  });

  it('refuses a file that shrank since the walk, without retrying', async () => {
    const run = withRetry(() => postForm(form(), file(), 'image/jpeg', 5000), { attempts: 3, baseMs: 1, maxMs: 2 });

    await expect(run).rejects.toMatchObject({ code: 'FileChanged' });
  });
});

describe('icecat upload --wait following a batch', () => {
  const summary = (status: string, success: number) => ({
    batchId: 'b1',
    status,
    closed: true,
    expected: 2,
    counts: { total: 2, pending: 2 - success, success, fail: 0, duplicate: 0, reused: 0, cats: 0 },
  });
  const unavailable = jsonAnswer(503, { error: { code: 'unavailable', message: 'the API handlers are not loaded yet' } });
  const notes: string[] = [];
  const progress = { ...silentProgress, note: (line: string) => notes.push(line) };

  beforeEach(() => {
    notes.length = 0;
  });

  it('waits through an API that stops answering for a while (a restarting stack), then reads the batch to done', async () => {
    // Arrange: one summary, then more failed tries than one request's retries, then the answers again.
    answers.push(
      jsonAnswer(200, summary('processing', 1)),
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      jsonAnswer(200, summary('done', 2)),
    );

    // Act
    const done = await waitUntilDone(client(), 'b1', 2, true, progress, 1, 60_000);

    // Assert
    expect(done.status).toBe('done');
    expect(requests).toHaveLength(6);
    expect(notes).toEqual([expect.stringMatching(/503 the API handlers are not loaded yet; asking again for up to 60 s/)]);
  });

  it('gives up with the network error once the API has not answered for the whole outage allowance', async () => {
    for (let i = 0; i < 50; i += 1) answers.push(unavailable);

    await expect(waitUntilDone(client(), 'b1', 2, true, progress, 5, 30)).rejects.toBeInstanceOf(NetworkError);
  });
});
