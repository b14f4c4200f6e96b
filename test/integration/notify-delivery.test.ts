// Completion callbacks against real HTTP receivers on 127.0.0.1: a receiver that fails first and then succeeds gets
// a correctly signed retry; a hanging receiver times out; a loopback target is refused where loopback is not allowed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { attemptDelivery, type CallbackJob, type DeliveryStep } from '../../lib/notify/delivery';
import type { NotifyConfig } from '../../lib/notify/schedule';
import { deriveCallbackSecret, verifySignature } from '../../lib/notify/signature';

interface Received {
  signature: string;
  body: string;
  contentType: string | undefined;
}

/** A receiver on a free loopback port answering the given statuses in turn (the last one from then on). */
async function receiver(statuses: number[], opts: { hang?: boolean } = {}) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      received.push({
        signature: String(req.headers['icecat-signature']),
        body: Buffer.concat(parts).toString(),
        contentType: req.headers['content-type'],
      });
      if (opts.hang) return;
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/icecat`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const LOCAL: NotifyConfig = {
  retry: { baseSeconds: 0.05, maxDelaySeconds: 0.2, windowSeconds: 5 },
  timeoutMs: 2000,
  allowLoopback: true,
  // The receivers listen on ports the system hands out.
  loopbackPorts: [[1024, 65535]],
};

const secret = deriveCallbackSecret('test-server-key', { clientId: 'c1', batchId: 'b1', createdAt: 1 });
const summary = JSON.stringify({ batchId: 'b1', status: 'done', counts: { total: 3, pending: 0, success: 2, fail: 1, duplicate: 0 } });

/** Runs attempts as the queue would, waiting each retry's delay, until delivered or given up. */
async function deliverUntilSettled(job: CallbackJob, config: NotifyConfig): Promise<DeliveryStep[]> {
  const steps: DeliveryStep[] = [];
  let next: CallbackJob | undefined = job;
  while (next) {
    const step = await attemptDelivery(next, secret, config);
    steps.push(step);
    if (step.retry) await sleep(step.retry.inSeconds * 1000);
    next = step.retry?.job;
  }
  return steps;
}

describe('callback delivery', () => {
  it('retries a receiver that answers 500, and the retry carries a valid signature over the same body', async () => {
    const hook = await receiver([500, 200]);
    try {
      const steps = await deliverUntilSettled({ url: hook.url, body: summary, attempts: 0 }, LOCAL);

      expect(hook.received).toHaveLength(2);
      const [first, retry] = hook.received;
      expect(retry?.body).toBe(summary);
      expect(retry?.contentType).toBe('application/json');
      expect(verifySignature(retry?.signature ?? '', secret, retry?.body ?? '')).toBe(true);
      expect(verifySignature(first?.signature ?? '', secret, first?.body ?? '')).toBe(true);
      expect(verifySignature(retry?.signature ?? '', 'whsec_wrong', retry?.body ?? '')).toBe(false);
      expect(steps.map((s) => s.state)).toEqual([
        expect.objectContaining({ attempts: 1, lastStatus: 500, lastError: 'HTTP 500', deliveredAt: null }),
        expect.objectContaining({ attempts: 2, lastStatus: 200, lastError: null, deliveredAt: expect.any(Number) }),
      ]);
      expect(steps[1]?.retry).toBeUndefined();
    } finally {
      await hook.close();
    }
  });

  it('times out a receiver that never answers, and gives up once the retry window is spent', async () => {
    const hook = await receiver([], { hang: true });
    try {
      const config: NotifyConfig = { ...LOCAL, timeoutMs: 200, retry: { baseSeconds: 0.1, maxDelaySeconds: 0.1, windowSeconds: 0.25 } };
      const steps = await deliverUntilSettled({ url: hook.url, body: summary, attempts: 0 }, config);

      expect(steps.length).toBeGreaterThanOrEqual(2);
      expect(steps[0]?.state).toMatchObject({ lastStatus: null, lastError: 'Timeout after 200 ms' });
      expect(steps.at(-1)?.state).toMatchObject({ deliveredAt: null, gaveUpAt: expect.any(Number) });
      expect(hook.received).toHaveLength(steps.length);
    } finally {
      await hook.close();
    }
  });

  it('never connects to a loopback receiver where loopback is not allowed (AWS), and records why', async () => {
    const hook = await receiver([200]);
    try {
      const aws: NotifyConfig = { ...LOCAL, allowLoopback: false };
      const step = await attemptDelivery({ url: hook.url.replace('http:', 'https:'), body: summary, attempts: 0 }, secret, aws);

      expect(step.state).toMatchObject({ attempts: 1, lastStatus: null, lastError: 'AddressNotAllowed', deliveredAt: null });
      expect(hook.received).toHaveLength(0);
    } finally {
      await hook.close();
    }
  });

  it('connects to the address judged, not to a second lookup of the name (no DNS rebinding)', async () => {
    const hook = await receiver([204]);
    try {
      const port = new URL(hook.url).port;
      let lookups = 0;
      // The first answer is judged and pinned; a rebinding server would answer differently the next time.
      const lookup = async () => (lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }]);
      const step = await attemptDelivery({ url: `http://rebind.test:${port}/hooks`, body: summary, attempts: 0 }, secret, LOCAL, {
        lookup,
      });

      expect(step.state).toMatchObject({ lastStatus: 204, deliveredAt: expect.any(Number) });
      expect(lookups).toBe(1);
      expect(hook.received).toHaveLength(1);
    } finally {
      await hook.close();
    }
  });
});
