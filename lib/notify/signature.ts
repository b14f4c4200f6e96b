// The IceCat-Signature header of a completion callback: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>,
// and the callback secret itself, derived per batch from a server key so that no callback secret is stored.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'IceCat-Signature';

const signatureV1 = (secret: string, t: number, body: string): string => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

export const signatureHeader = (secret: string, body: string, tSeconds: number): string =>
  `t=${tSeconds},v1=${signatureV1(secret, tSeconds, body)}`;

/**
 * What a receiver does: the header parses, some v1 matches (compared in constant time), and t is within
 * `toleranceSeconds` of its clock (a replay of an old delivery fails).
 */
export function verifySignature(
  header: string,
  secret: string,
  body: string,
  opts: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  const parts = header.split(',').map((p) => p.trim().split('=', 2) as [string, string | undefined]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return false;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signatureV1(secret, t, body), 'hex');
  return parts.some(([k, v]) => {
    if (k !== 'v1' || !v || !/^[0-9a-f]{64}$/.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, 'hex'), expected);
  });
}

/**
 * A batch's callback secret: HMAC-SHA256 of the batch's identity under the server's key. Returned once at creation
 * and recomputed to sign, so the table never holds it; the creation time makes a batch re-created under the same
 * name (after an erasure) get a new secret. Rotating the server key changes every batch's secret.
 */
export function deriveCallbackSecret(serverKey: string, batch: { clientId: string; batchId: string; createdAt: number }): string {
  const mac = createHmac('sha256', serverKey)
    .update(['icecat-callback-v1', batch.clientId, batch.batchId, String(batch.createdAt)].join('\n'))
    .digest('base64url');
  return `whsec_${mac}`;
}
