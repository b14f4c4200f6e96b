// The upload's order of calls and its handling of refusals, against a loopback server that answers as the API and
// S3 do (the local stack runs the real ones in test/integration/cli.test.ts; here the sequence is what is checked).
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiClient } from '../../lib/cli/api-client';
import { uploadFolder } from '../../lib/cli/uploader';

interface Declared {
  name: string;
  size: number;
}

let server: Server;
let base: string;
let log: string[];
let tooLarge: number;
let s3Refuses: Set<string>;
let dir: string;
/** The batch's `expected` as the fake API keeps it. */
let expected: number;
/** Requests ("POST /v1/batches/b1/uploads") whose next answer is lost: handled, then the connection dropped. */
let loseAnswerTo: Set<string>;
let failNextDeclare: boolean;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forms = (files: Declared[]) => files.map((f) => ({ file: f.name, url: `${base}/s3`, fields: { key: f.name } }));
      if (req.url === '/s3') {
        const key = /name="key"\r\n\r\n([^\r]*)/.exec(body.toString('latin1'))?.[1] ?? '';
        log.push(`upload ${key}`);
        if (s3Refuses.has(key)) return res.writeHead(403).end('<Error><Code>AccessDenied</Code><Message>Policy expired</Message></Error>');
        return res.writeHead(204).end();
      }
      const request = JSON.parse(body.toString() || '{}') as { files?: Declared[]; renew?: boolean };
      const files = request.files ?? [];
      const answer = (status: number, value: unknown) => {
        if (loseAnswerTo.delete(`${req.method} ${req.url}`)) return res.destroy();
        return res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      };
      const big = files.findIndex((f) => f.size > tooLarge);
      if (big >= 0) {
        log.push(`413 ${files[big]!.name}`);
        return res.writeHead(413, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: {
              code: 'file_too_large',
              message: `files[${big}].size: ${files[big]!.size} bytes is more than the ${tooLarge} bytes accepted per file`,
            },
          }),
        );
      }
      if (req.method === 'POST' && req.url === '/v1/batches') {
        log.push(`create ${files.map((f) => f.name).join(',')}`);
        expected = files.length;
        return answer(201, { batchId: 'b1', uploads: forms(files), batch: { batchId: 'b1', expected } });
      }
      if (req.method === 'POST' && req.url === '/v1/batches/b1/uploads' && failNextDeclare && !request.renew) {
        failNextDeclare = false;
        return res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Bad Gateway' }));
      }
      if (req.method === 'POST' && req.url === '/v1/batches/b1/uploads') {
        log.push(`${request.renew ? 'renew' : 'declare'} ${files.map((f) => f.name).join(',')}`);
        if (!request.renew) expected += files.length;
        return answer(200, { uploads: forms(files), batch: { batchId: 'b1', expected } });
      }
      if (req.method === 'GET' && req.url === '/v1/batches/b1') {
        log.push('get');
        return answer(200, { batchId: 'b1', status: 'open', expected, counts: { total: 0 } });
      }
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
});

beforeEach(() => {
  log = [];
  tooLarge = Infinity;
  s3Refuses = new Set();
  loseAnswerTo = new Set();
  failNextDeclare = false;
  expected = 0;
  dir = mkdtempSync(path.join(tmpdir(), 'icecat-uploader-'));
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

function folder(files: Record<string, number>): string {
  const root = path.join(dir, 'f');
  mkdirSync(root);
  for (const [name, size] of Object.entries(files)) writeFileSync(path.join(root, name), Buffer.alloc(size, 1));
  return root;
}

const upload = (root: string) =>
  uploadFolder({
    client: new ApiClient({ apiUrl: base, apiKey: 'k', retry: { attempts: 2, baseMs: 1, maxMs: 2 } }),
    inputs: [root],
    concurrency: 1,
    chunkSize: 2,
  });

describe('uploadFolder', () => {
  it('declares each next chunk before sending any file of the current one, so the batch never looks complete early', async () => {
    const root = folder({ 'a.jpg': 1, 'b.jpg': 1, 'c.jpg': 1, 'd.jpg': 1, 'e.jpg': 1 });

    const result = await upload(root);

    // Every upload happens while more files are declared than have been sent, until the last chunk.
    const at = (entry: string) => log.indexOf(entry);
    expect(log[0]).toBe('create f/a.jpg,f/b.jpg');
    expect(at('declare f/c.jpg,f/d.jpg')).toBeLessThan(at('upload f/a.jpg'));
    expect(at('declare f/e.jpg')).toBeLessThan(at('upload f/c.jpg'));
    expect(log.filter((l) => l.startsWith('upload'))).toEqual(['a', 'b', 'c', 'd', 'e'].map((n) => `upload f/${n}.jpg`));
    expect(result).toMatchObject({ batchId: 'b1', uploadedFiles: 5, uploadedBytes: 5, rejected: [], unsent: [] });
  });

  it('does not declare files twice when the answer to their declaration is lost: it reads the batch, then renews their forms', async () => {
    const root = folder({ 'a.jpg': 1, 'b.jpg': 1, 'c.jpg': 1, 'd.jpg': 1, 'e.jpg': 1 });
    loseAnswerTo.add('POST /v1/batches/b1/uploads');

    const result = await upload(root);

    expect(log.filter((l) => !l.startsWith('upload'))).toEqual([
      'create f/a.jpg,f/b.jpg',
      'declare f/c.jpg,f/d.jpg',
      'get',
      'renew f/c.jpg,f/d.jpg',
      'declare f/e.jpg',
    ]);
    expect(expected).toBe(5);
    expect(result).toMatchObject({ uploadedFiles: 5, rejected: [], unsent: [] });
  });

  it('declares again when the lost declaration did not take effect', async () => {
    const root = folder({ 'a.jpg': 1, 'b.jpg': 1, 'c.jpg': 1 });
    // A 502 from a proxy: the API may or may not have seen it; here it did not.
    failNextDeclare = true;

    const result = await upload(root);

    expect(log.filter((l) => !l.startsWith('upload'))).toEqual(['create f/a.jpg,f/b.jpg', 'get', 'declare f/c.jpg']);
    expect(expected).toBe(3);
    expect(result.uploadedFiles).toBe(3);
  });

  it('drops a file the API finds too large and every later one over the same cap, sending the rest', async () => {
    tooLarge = 10;
    const root = folder({ 'a.jpg': 1, 'b.jpg': 50, 'c.jpg': 1, 'd.jpg': 60 });

    const result = await upload(root);

    expect(log).toEqual(['413 f/b.jpg', 'create f/a.jpg', 'declare f/c.jpg', 'upload f/a.jpg', 'upload f/c.jpg']);
    expect(result.rejected.map((r) => [r.file, r.code])).toEqual([
      ['f/b.jpg', 'FileTooLarge'],
      ['f/d.jpg', 'FileTooLarge'],
    ]);
    expect(result.rejected[0]?.message).toBe('50 bytes is more than the 10 bytes accepted per file');
    expect(result.uploadedFiles).toBe(2);
  });

  it('reports a form S3 refuses as a failed file and goes on with the others', async () => {
    s3Refuses.add('f/a.jpg');
    const root = folder({ 'a.jpg': 1, 'b.jpg': 1 });

    const result = await upload(root);

    expect(result.rejected).toEqual([{ file: 'f/a.jpg', path: path.join(root, 'a.jpg'), code: 'AccessDenied', message: 'Policy expired' }]);
    expect([...result.sent]).toEqual(['f/b.jpg']);
  });

  it('lists the files the walk had to skip (a broken link, a name that is not UTF-8) as not uploaded, and sends the rest', async () => {
    const root = folder({ 'a.jpg': 1 });
    symlinkSync('missing.jpg', path.join(root, 'dangling.jpg'));
    writeFileSync(Buffer.concat([Buffer.from(path.join(root, 'caf')), Buffer.from([0xe9]), Buffer.from('.jpg')]), 'x');

    const result = await upload(root);

    expect(result.rejected.map((r) => [r.file, r.code])).toEqual([
      ['f/caf\\xE9.jpg', 'InvalidName'],
      ['f/dangling.jpg', 'BrokenLink'],
    ]);
    expect(result.rejected[1]?.message).toBe('skipped: a symbolic link to nothing (ENOENT)');
    expect([...result.sent]).toEqual(['f/a.jpg']);
  });

  it('makes no batch when no file can go', async () => {
    const root = folder({ 'empty.jpg': 0 });

    const result = await upload(root);

    expect(log).toEqual([]);
    expect(result.batchId).toBeUndefined();
    expect(result.rejected.map((r) => r.code)).toEqual(['EmptyFile']);
  });
});
