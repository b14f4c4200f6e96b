// One delivery attempt of a completion callback: a signed POST of the batch summary to the pinned address, with an
// overall deadline. Redirects are not followed (a 3xx is an unsuccessful answer), and at most a few KB of the answer
// are read, so a receiver can neither steer the request elsewhere nor hold the sender's memory.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { SIGNATURE_HEADER, signatureHeader } from './signature';
import type { CallbackTarget } from './target';

export interface AttemptResult {
  /** 2xx. */
  delivered: boolean;
  /** The receiver's HTTP status; null when none came (timeout, refused connection, TLS failure). */
  status: number | null;
  /** Why no status came, or the receiver's non-2xx status. */
  error: string | null;
  /** The signature header sent. */
  signature: string;
}

interface AttemptOptions {
  timeoutMs: number;
  /** Unix seconds of the signature; now by default. */
  nowSeconds?: number;
  userAgent?: string;
}

const MAX_ANSWER_BYTES = 4096;

/** A lookup that answers the address already judged, whatever name the socket asks for. */
const pinnedLookup = (target: CallbackTarget): LookupFunction =>
  ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;

export function postCallback(target: CallbackTarget, secret: string, body: string, opts: AttemptOptions): Promise<AttemptResult> {
  const t = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const signature = signatureHeader(secret, body, t);
  const transport = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'signature'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, signature });
    };
    const req = transport.request(target.url, {
      method: 'POST',
      lookup: pinnedLookup(target),
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': opts.userAgent ?? 'IceCatWrangler-Webhook/1',
        [SIGNATURE_HEADER]: signature,
      },
    });
    const deadline = setTimeout(() => {
      finish({ delivered: false, status: null, error: `Timeout after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const done = () =>
        finish({ delivered: status >= 200 && status < 300, status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish({ delivered: false, status: null, error: err.code ?? err.name });
    });
    req.end(body);
  });
}
