// POST forms sent to the local S3 by anyone (they need no signature to be read): refused from their first bytes, never
// kept whole in memory, and never more than a few read at once.
import http from 'node:http';
import { type LocalS3, startLocalS3 } from '../../local/s3/s3';
import { tempDataDir } from '../helpers';

let s3: LocalS3;
const MAX_FILE = 1024 * 1024;
const MAX_FORMS = 2;
const BOUNDARY = 'icecat-test-boundary';

beforeAll(async () => {
  s3 = await startLocalS3({
    host: '127.0.0.1',
    port: 0,
    dataDir: tempDataDir('icecat-s3-forms-'),
    maxFormFileBytes: MAX_FILE,
    maxConcurrentForms: MAX_FORMS,
    formFieldsTimeoutMs: 1000,
  });
});
afterAll(() => s3.close());

const part = (name: string, value: string | Buffer, fileName?: string): Buffer =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${fileName ? `; filename="${fileName}"\r\nContent-Type: image/jpeg` : ''}\r\n\r\n`,
    ),
    Buffer.from(value),
    Buffer.from('\r\n'),
  ]);

interface Answer {
  status: number;
  code?: string;
}

/**
 * Starts a form POST declaring `contentLength` bytes and sends only `sent` of them: the answer must come without the rest
 * (the request is left open, as a slow or hostile client leaves it). Fails when none comes within `waitMs`.
 */
function postPartly(sent: Buffer, contentLength: number, waitMs = 5000): { answer: Promise<Answer>; abort: () => void } {
  const req = http.request(`${s3.url}/${s3.bucket}`, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(contentLength) },
  });
  let timer: NodeJS.Timeout | undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${waitMs} ms while the body was not sent whole`)), waitMs);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] });
      });
    });
    req.on('error', () => undefined); // the connection closed after the answer
  });
  req.write(sent);
  // A form aborted unanswered (on purpose) leaves no rejection behind.
  answer.catch(() => undefined);
  return {
    answer,
    abort: () => {
      clearTimeout(timer);
      req.destroy();
    },
  };
}

describe('POST forms to the local S3', () => {
  it('refuses a body declaring more than the largest upload with EntityTooLarge at once, before reading it', async () => {
    const form = postPartly(part('key', 'uploads/x/y/z.jpg'), 1024 ** 3);
    try {
      await expect(form.answer).resolves.toEqual({ status: 400, code: 'EntityTooLarge' });
    } finally {
      form.abort();
    }
  });

  it('refuses a form whose file comes before its policy (an anonymous upload) from its first bytes, without the file', async () => {
    const start = Buffer.concat([part('file', Buffer.alloc(64 * 1024, 1), 'cat.jpg').subarray(0, 64 * 1024)]);
    const form = postPartly(start, MAX_FILE / 2);
    try {
      await expect(form.answer).resolves.toEqual({ status: 403, code: 'AccessDenied' });
    } finally {
      form.abort();
    }
  });

  it('refuses more than 20 KB of fields before the file with MaxPostPreDataLengthExceededError', async () => {
    const form = postPartly(part('x-ignore-padding', 'p'.repeat(30 * 1024)), MAX_FILE / 2);
    try {
      await expect(form.answer).resolves.toEqual({ status: 400, code: 'MaxPostPreDataLengthExceededError' });
    } finally {
      form.abort();
    }
  });

  it(`reads at most ${MAX_FORMS} form bodies at once: one more is answered 503 SlowDown, and a slot freed is used again`, async () => {
    // Two slow forms, their fields not yet complete.
    const slow = Array.from({ length: MAX_FORMS }, () =>
      postPartly(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="key"\r\n\r\nupl`), 4096),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      const third = postPartly(part('key', 'k'), 4096);
      await expect(third.answer).resolves.toEqual({ status: 503, code: 'SlowDown' });
      third.abort();
    } finally {
      for (const form of slow) form.abort();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = postPartly(part('file', 'x', 'cat.jpg'), 4096);
    try {
      // Read (its slot free again), and refused for what it is: a form without a policy.
      await expect(after.answer).resolves.toEqual({ status: 403, code: 'AccessDenied' });
    } finally {
      after.abort();
    }
  });

  it('ends a form whose fields stall with 400 RequestTimeout (a stalled form would hold its slot)', async () => {
    const stalled = postPartly(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="key"\r\n\r\nupl`), 4096);
    try {
      await expect(stalled.answer).resolves.toEqual({ status: 400, code: 'RequestTimeout' });
    } finally {
      stalled.abort();
    }
  });
});
