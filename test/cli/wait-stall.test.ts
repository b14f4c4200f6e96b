// `icecat upload --wait` when nothing moves: one line saying why, where the service knows (the local bridge's GET
// /status: out of disk space, paused, dead letters), and --wait-timeout ending the wait. The batch is served by a
// loopback stand-in for the API (a batch that never moves, which the local stack cannot hold still on demand); the
// status by the bridge's own status server over a real LocalQueue.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { ApiClient } from '../../lib/cli/api-client';
import { commandHandlers } from '../../lib/cli/commands';
import { WaitTimeoutError } from '../../lib/cli/errors';
import { silentProgress } from '../../lib/cli/progress';
import { LOCAL_BRIDGE_PORT, readServiceStatus, statusUrlFor } from '../../lib/cli/service-status';
import { waitUntilDone } from '../../lib/cli/wait';
import { type BridgeStatusServer, startBridgeStatusServer } from '../../local/bridge/status';
import { DEFAULT_PORTS } from '../../local/contract';
import type { DiskState } from '../../local/disk-space';
import { LocalQueue } from '../../local/queue/queue';

const PROCESSING = {
  batchId: 'b1',
  status: 'processing',
  closed: true,
  expected: 3,
  counts: { total: 3, pending: 2, success: 1, fail: 0, duplicate: 0, reused: 0, cats: 0 },
};

const FULL: DiskState = {
  dataDir: '/srv/icecat/data',
  freeBytes: 0,
  totalBytes: 12 * 1024 * 1024,
  low: true,
  full: true,
  faults: [
    {
      service: 'dynamodb',
      since: '2026-11-27T12:00:00.000Z',
      last: '2026-11-27T12:00:09.000Z',
      count: 41,
      message: 'IO error: No space left on device',
    },
  ],
};

let api: Server;
let apiUrl: string;
let queue: LocalQueue;
let bridge: BridgeStatusServer;
let disk: DiskState;
const notes: string[] = [];
const progress = { ...silentProgress, note: (line: string) => notes.push(line) };

beforeAll(async () => {
  // The API's answers to an upload of one file (its batch, its form, its close), then a batch that never moves.
  api = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && req.url === '/v1/batches') {
        return json(201, {
          batchId: 'b1',
          uploads: [{ file: 'coffee.png', url: `${apiUrl}/s3`, fields: { key: 'uploads/c/b1/coffee.png' } }],
          expiresAt: '2027-01-01T00:00:00Z',
          batch: { ...PROCESSING, status: 'open', closed: false },
        });
      }
      if (req.method === 'POST' && req.url === '/s3') return res.writeHead(204).end();
      if (req.url?.startsWith('/v1/batches/b1/images')) return json(200, { items: [] });
      json(200, PROCESSING);
    });
  });
  api.listen(0, '127.0.0.1');
  await once(api, 'listening');
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  queue = new LocalQueue({ handler: async () => ({ batchItemFailures: [] }), batchWindowMs: 1, maxReceiveCount: 1, log: () => undefined });
  bridge = await startBridgeStatusServer(queue, { host: '127.0.0.1', port: 0, controlToken: 'wait-stall-test', disk: () => disk });
});

afterAll(async () => {
  api.close();
  await bridge.close();
  await queue.stop(100);
});

beforeEach(() => {
  notes.length = 0;
  disk = { ...FULL, full: false, low: false, faults: [] };
  queue.resume();
});

const client = () => new ApiClient({ apiUrl, apiKey: 'key-1', retry: { attempts: 1, baseMs: 1, maxMs: 1 } });
const status = () => readServiceStatus(`${bridge.url}/status`);
const wait = (timeoutMs: number, withStatus = true) =>
  waitUntilDone(client(), 'b1', 3, true, progress, 10, 60_000, { stallMs: 100, timeoutMs, ...(withStatus ? { status } : {}) });

describe('icecat upload --wait on a batch that does not move', () => {
  it('says in one line that the service is out of disk space, keeps waiting, and --wait-timeout ends it', async () => {
    disk = FULL;

    const err = await wait(1_000).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as Error).message).toMatch(
      /^gave up waiting after 1 s \(--wait-timeout\): batch b1 is processing, 1 of 3 classified; the service is out of disk space/,
    );
    // Said again each stall window while it stays so, one line each.
    expect(notes.length).toBeGreaterThanOrEqual(2);
    expect(notes[0]).toMatch(
      /^nothing has moved for \d+ s \(1 of 3 classified\): the service is out of disk space in \/srv\/icecat\/data \(writes refused: dynamodb 41\); the uploads are kept and handled once space is freed; still waiting$/,
    );
  });

  it("says the service's queue is paused", async () => {
    queue.pause();

    await expect(wait(600)).rejects.toBeInstanceOf(WaitTimeoutError);

    expect(notes[0]).toMatch(/the service's queue is paused/);
  });

  it("says how many uploads are in the service's dead-letter list", async () => {
    const failing = new LocalQueue({
      handler: async () => {
        throw new Error('refused');
      },
      batchWindowMs: 1,
      maxReceiveCount: 1,
      retryBaseMs: 1,
      retryMaxMs: 1,
      log: () => undefined,
    });
    const server = await startBridgeStatusServer(failing, { host: '127.0.0.1', port: 0, controlToken: 'wait-stall-test' });
    failing.send('{"Records":[]}');
    await failing.whenIdle(5_000);

    const err = await waitUntilDone(client(), 'b1', 3, true, progress, 10, 60_000, {
      stallMs: 100,
      timeoutMs: 600,
      status: () => readServiceStatus(`${server.url}/status`),
    }).catch((e: unknown) => e);
    await server.close();
    await failing.stop(100);

    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(notes[0]).toMatch(/1 upload is in the service's dead-letter list \(npm run dead-letters shows them\)/);
  });

  it('says the service reports no fault when its status names none, and that it cannot be asked without one', async () => {
    await expect(wait(600)).rejects.toBeInstanceOf(WaitTimeoutError);
    await expect(wait(600, false)).rejects.toBeInstanceOf(WaitTimeoutError);

    expect(notes.find((n) => n.includes('reports no fault'))).toBeDefined();
    expect(notes.find((n) => n.includes('cannot be asked why'))).toBeDefined();
  });
});

describe('icecat upload --wait --wait-timeout', () => {
  it('ends with exit 1 and one line saying where the batch stands and why', async () => {
    disk = FULL;
    const stderr: string[] = [];
    const sink = (into: string[]) => new Writable({ write: (chunk: Buffer, _e, done) => (into.push(chunk.toString()), done()) });
    const handlers = commandHandlers({
      config: { apiUrl, apiKey: 'key-1', bridgeUrl: bridge.url, waitStallMs: 100, pricePerImageUsd: 0.001 },
      stdout: sink([]),
      stderr: sink(stderr),
      pollMs: 10,
    });

    const code = await handlers.upload([path.join(__dirname, '..', 'fixtures', 'coffee.png')], {
      concurrency: 1,
      wait: true,
      waitTimeout: 2,
    });

    expect(code).toBe(1);
    const lines = stderr.join('').split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(/^nothing has moved for \d+ s \(1 of 3 classified\): the service is out of disk space/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^gave up waiting after 2 s \(--wait-timeout\): batch b1 is processing, 1 of 3 classified; the service is out of disk space.*; the service goes on with it: icecat status b1$/,
      ),
    );
  });
});

describe('where the CLI asks for the service status', () => {
  it('asks ICECAT_BRIDGE_URL, else the local bridge beside a loopback API, else nowhere', () => {
    expect(statusUrlFor('http://10.0.0.5:3000', undefined, 'http://10.0.0.5:4999/')).toBe('http://10.0.0.5:4999/status');
    expect(statusUrlFor('http://127.0.0.1:3000', undefined, undefined)).toBe(`http://127.0.0.1:${LOCAL_BRIDGE_PORT}/status`);
    expect(statusUrlFor('https://api.example.com', undefined, undefined)).toBeUndefined();
    expect(LOCAL_BRIDGE_PORT).toBe(DEFAULT_PORTS.bridge);
  });
});
