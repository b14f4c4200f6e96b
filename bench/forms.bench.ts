// `npm run bench forms`: the local stack's resident memory while anonymous POST forms are refused (issue 29: one 128 MB
// anonymous body once took it to 503 MB). Sixteen 64 MB bodies at once, each a form with no policy, are posted to the
// local S3 of a stack whose MAX_UPLOAD_BYTES admits them (so that the refusal comes from reading the fields before the
// file, not from the Content-Length); the stack's resident memory is sampled throughout and compared with its idle
// figure in the same run. Smoke: two bodies of 1 MB.
// Before the stack, in this process: the CPU the form guard spends on 20 KB of fields (150 small parts) fed a byte per
// chunk, as a hostile client can send them (issue 37: each chunk re-concatenated and re-parsed the whole buffer, 19.5 s
// of CPU for one such form). Smoke: 4 KB.
import type { IncomingMessage } from 'node:http';
import http from 'node:http';
import { Readable } from 'node:stream';
import { postFormGuard } from '../local/s3/requests';
import { onStack } from './on-stack';
import { treeRssBytes } from './process-tree';
import { headline as figure, type Headline, round, sized } from './stats';

const MB = 1024 * 1024;
const POSTS = sized(16, 2);
const BODY_BYTES = sized(64 * MB, 1 * MB);
const BOUNDARY = 'icecat-bench-boundary';

/** A form with a key and a file of `bytes` zero bytes, and no policy: what anyone can send to the bucket. */
function anonymousForm(bytes: number): { head: Buffer; tailBytes: number; total: number } {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="key"\r\n\r\nuploads/anyone/b/big.jpg\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const fileBytes = bytes - head.length - tail.length;
  return { head, tailBytes: fileBytes + tail.length, total: bytes };
}

/** Posts one anonymous form, streaming its body (never held whole here either); resolves with S3's status and code. */
function post(url: string): Promise<{ status: number; code?: string }> {
  const form = anonymousForm(BODY_BYTES);
  const chunk = Buffer.alloc(64 * 1024);
  let left = form.tailBytes;
  const body = new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(form.total) },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] });
        req.destroy();
      });
    });
    // The stack closes the connection after its answer: a write cut short then is expected.
    req.on('error', (err) => reject(err));
    req.write(form.head);
    body.pipe(req);
  });
}

const FIELD_BYTES = sized(20 * 1024 - 200, 4 * 1024);

/** A form of many small fields (no policy) and a file, its bytes pushed one per read, each on its own turn. */
function bytewiseForm(fieldBytes: number): Readable {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < fieldBytes; i++) {
    const part = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="x-ignore-${i}"\r\n\r\n${'v'.repeat(40)}\r\n`;
    parts.push(part);
    size += part.length;
  }
  parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cat.jpg"\r\n\r\nJPEG\r\n--${BOUNDARY}--\r\n`);
  const body = Buffer.from(parts.join(''));
  let at = 0;
  return new Readable({
    highWaterMark: 1,
    read() {
      setImmediate(() => this.push(at < body.length ? body.subarray(at, ++at) : null));
    },
  });
}

/** CPU seconds the form guard spends reading one form's fields fed a byte per chunk (refused: it has no policy). */
async function bytewiseFieldsCpu(): Promise<{ seconds: number; answer: string }> {
  const guard = postFormGuard(() => undefined, { maxFileBytes: 1024 * 1024, maxConcurrentForms: 1, fieldsTimeoutMs: 600_000 });
  const req = bytewiseForm(FIELD_BYTES);
  const started = process.cpuUsage();
  const answer = await guard(
    {
      method: 'POST',
      path: '/bucket',
      query: {},
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      req: req as IncomingMessage,
    },
    () => Promise.resolve(),
  ).then(
    () => 'stored',
    (err: { code?: string }) => err.code ?? 'error',
  );
  const used = process.cpuUsage(started);
  req.destroy();
  return { seconds: (used.user + used.system) / 1e6, answer };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export default async function run(): Promise<Record<string, unknown>> {
  const bytewise = await bytewiseFieldsCpu();
  if (bytewise.answer !== 'AccessDenied') throw new Error(`a form without a policy was answered ${bytewise.answer}`);
  const stack = await onStack('forms', { MAX_UPLOAD_BYTES: String(2 * BODY_BYTES) }, async (stack) => {
    const pid = stack.child.pid as number;
    const bucketUrl = `${stack.s3Url}/${stack.bucket}`;
    await sleep(2000);
    const idle = treeRssBytes(pid).bytes;
    let peak = idle;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, treeRssBytes(pid).bytes);
        await sleep(25);
      }
    })();
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: POSTS }, () => post(bucketUrl)));
    const seconds = (performance.now() - started) / 1000;
    await sleep(500);
    sampling = false;
    await sampler;
    const stored = answers.filter((a) => a.status < 300);
    if (stored.length > 0) throw new Error(`${stored.length} anonymous forms were stored: ${JSON.stringify(answers)}`);
    const codes: Record<string, number> = {};
    for (const a of answers) {
      const name = `${a.status} ${a.code ?? ''}`.trim();
      codes[name] = (codes[name] ?? 0) + 1;
    }
    return {
      posts: POSTS,
      bodyMB: round(BODY_BYTES / MB, 1),
      answers: codes,
      seconds: round(seconds, 2),
      rss: {
        idleMB: round(idle / MB, 1),
        peakMB: round(peak / MB, 1),
        growthMB: round((peak - idle) / MB, 1),
        peakOverIdle: round(peak / idle, 2),
      },
    };
  });
  return { ...stack, bytewiseFields: { kb: round(FIELD_BYTES / 1024, 1), cpuSeconds: round(bytewise.seconds, 3) } };
}

export function headline(r: Record<string, unknown>): Headline[] {
  const rss = (r.rss ?? {}) as Record<string, unknown>;
  return [
    figure('stack resident memory growth over idle, sixteen 64 MB anonymous form POSTs refused (MB)', rss.growthMB, '<= 300'),
    figure('stack peak resident memory ÷ idle', rss.peakOverIdle),
    figure(
      'form guard CPU for 20 KB of fields fed a byte per chunk (s)',
      ((r.bytewiseFields ?? {}) as Record<string, unknown>).cpuSeconds,
      '<= 1',
    ),
  ];
}
