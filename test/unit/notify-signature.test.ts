import { createHmac } from 'node:crypto';
import { encodeCallbackMessage, jobOf, nextMessage } from '../../lib/notify/job';
import { CallbackMessageError, decodeCallbackMessage } from '../../lib/notify/job-decode';
import { nextRetryDelay } from '../../lib/notify/schedule';
import { deriveCallbackSecret, signatureHeader, verifySignature } from '../../lib/notify/signature';

describe('IceCat-Signature', () => {
  const body = '{"batchId":"b1","status":"done"}';
  const secret = 'whsec_test';

  it('is t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
    const expected = createHmac('sha256', secret).update(`1714564800.${body}`).digest('hex');
    expect(signatureHeader(secret, body, 1714564800)).toBe(`t=1714564800,v1=${expected}`);
  });

  it('verifies with the same secret and body within the tolerance', () => {
    const header = signatureHeader(secret, body, 1000);
    expect(verifySignature(header, secret, body, { nowSeconds: 1100 })).toBe(true);
  });

  it('fails with another secret, an altered body, an old timestamp or a malformed header', () => {
    const header = signatureHeader(secret, body, 1000);
    expect(verifySignature(header, 'whsec_other', body, { nowSeconds: 1000 })).toBe(false);
    expect(verifySignature(header, secret, body.replace('done', 'open'), { nowSeconds: 1000 })).toBe(false);
    expect(verifySignature(header, secret, body, { nowSeconds: 1000 + 301 })).toBe(false);
    expect(verifySignature('v1=abc', secret, body, { nowSeconds: 1000 })).toBe(false);
    expect(verifySignature('t=1000,v1=zz', secret, body, { nowSeconds: 1000 })).toBe(false);
  });
});

describe('deriveCallbackSecret', () => {
  const batch = { clientId: 'c1', batchId: 'b1', createdAt: 1714564800000 };

  it('gives the same secret for the same batch, so it can be recomputed instead of stored', () => {
    expect(deriveCallbackSecret('server-key', batch)).toBe(deriveCallbackSecret('server-key', { ...batch }));
    expect(deriveCallbackSecret('server-key', batch)).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });

  it('differs per client, per batch, per creation (a batch re-created after erasure) and per server key', () => {
    const secrets = new Set([
      deriveCallbackSecret('server-key', batch),
      deriveCallbackSecret('server-key', { ...batch, clientId: 'c2' }),
      deriveCallbackSecret('server-key', { ...batch, batchId: 'b2' }),
      deriveCallbackSecret('server-key', { ...batch, createdAt: batch.createdAt + 1 }),
      deriveCallbackSecret('other-key', batch),
    ]);
    expect(secrets.size).toBe(5);
  });
});

describe('nextRetryDelay', () => {
  const day = { baseSeconds: 30, maxDelaySeconds: 900, windowSeconds: 86_400 };

  it('doubles from the base after each failed attempt, with at most half of it random', () => {
    expect([1, 2, 3, 4].map((n) => nextRetryDelay(n, 0, day, () => 1))).toEqual([30, 60, 120, 240]);
    expect([1, 2, 3, 4].map((n) => nextRetryDelay(n, 0, day, () => 0))).toEqual([15, 30, 60, 120]);
  });

  it('caps each wait at the queue delay limit', () => {
    expect(nextRetryDelay(20, 0, day, () => 1)).toBe(900);
  });

  it('keeps retrying for a day, then gives up', () => {
    let elapsed = 0;
    let attempts = 1;
    for (;;) {
      const delay = nextRetryDelay(attempts, elapsed, day, () => 0.5);
      if (delay === undefined) break;
      elapsed += delay;
      attempts++;
    }
    expect(elapsed).toBeLessThanOrEqual(86_400);
    expect(elapsed).toBeGreaterThan(86_400 - 900);
    expect(attempts).toBeGreaterThan(100);
  });
});

describe('callback messages', () => {
  const message = {
    type: 'callback' as const,
    clientId: 'c1',
    batchId: 'b1',
    createdAt: 1714564800000,
    url: 'https://hooks.example.com/x',
    body: '{"batchId":"b1"}',
    attempts: 0,
  };

  it('round-trip, and carry the retry count and first attempt time forward', () => {
    const decoded = decodeCallbackMessage(encodeCallbackMessage(message));
    expect(decoded).toEqual(message);
    const next = nextMessage(decoded, { ...jobOf(decoded), attempts: 1, firstAttemptAt: 5 });
    expect(decodeCallbackMessage(encodeCallbackMessage(next))).toMatchObject({ attempts: 1, firstAttemptAt: 5, body: message.body });
  });

  it('refuse anything else, and never carry a secret', () => {
    expect(() => decodeCallbackMessage('nope')).toThrow(CallbackMessageError);
    expect(() => decodeCallbackMessage(JSON.stringify({ ...message, type: 'erase' }))).toThrow(CallbackMessageError);
    expect(() => decodeCallbackMessage(JSON.stringify({ ...message, secret: 'whsec_x' }))).toThrow(CallbackMessageError);
  });
});
