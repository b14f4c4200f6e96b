// Opaque, tamper-evident paging cursors: a DynamoDB LastEvaluatedKey sealed with an HMAC over the key and the
// query's scope (index, partition, key condition). A cursor forged, edited, or issued for another query fails.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { IceCatError } from '../../errors';

export type StartKey = Record<string, string | number>;

export class CursorError extends IceCatError {
  override name = 'CursorError';
  readonly code: string = 'invalid_cursor';
}

/** Shortest secret accepted: 32 bytes of entropy as text. */
export const MIN_CURSOR_SECRET_LENGTH = 32;

const VERSION = 'c1';

function mac(secret: string, scope: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(`${VERSION}\n${scope}\n${payload}`).digest();
}

function isStartKey(value: unknown): value is StartKey {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));
}

/** Seals a LastEvaluatedKey for one query scope. */
export function encodeCursor(key: StartKey, scope: string, secret: string): string {
  const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
  return `${payload}.${mac(secret, scope, payload).toString('base64url')}`;
}

/** Opens a cursor issued by encodeCursor for the same scope; anything else throws CursorError. */
export function decodeCursor(cursor: string, scope: string, secret: string): StartKey {
  const [payload, signature, extra] = cursor.split('.');
  if (!payload || !signature || extra !== undefined) throw new CursorError('cursor is malformed');
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(secret, scope, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new CursorError('cursor is invalid or belongs to another query');
  }
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch (cause) {
    throw new CursorError('cursor is malformed', { cause });
  }
  if (!isStartKey(key)) throw new CursorError('cursor is malformed');
  return key;
}

/** A cursor codec bound to one secret, checked once so a weak or missing secret fails at start-up. */
export interface CursorCodec {
  encode(key: StartKey, scope: string): string;
  decode(cursor: string, scope: string): StartKey;
}

export function cursorCodec(secret: string): CursorCodec {
  if (secret.length < MIN_CURSOR_SECRET_LENGTH) {
    throw new CursorError(`cursor secret must be at least ${MIN_CURSOR_SECRET_LENGTH} characters`);
  }
  return {
    encode: (key, scope) => encodeCursor(key, scope, secret),
    decode: (cursor, scope) => decodeCursor(cursor, scope, secret),
  };
}
