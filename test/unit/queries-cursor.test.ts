import { createHmac } from 'node:crypto';
import { CursorError, cursorCodec, decodeCursor, encodeCursor } from '../../lib/store/table/cursor';

const SECRET = 's'.repeat(40);
const KEY = { batch_id: '01HX', img_fprint: 'abc', upload_ts: 1_700_000_000_000 };
const SCOPE = '["batch-results","B1"]';

describe('cursor', () => {
  it('round-trips a LastEvaluatedKey for the same scope', () => {
    const cursor = encodeCursor(KEY, SCOPE, SECRET);

    expect(decodeCursor(cursor, SCOPE, SECRET)).toEqual(KEY);
  });

  it('is URL-safe', () => {
    expect(encodeCursor(KEY, SCOPE, SECRET)).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  it('refuses a cursor issued for another query scope', () => {
    const cursor = encodeCursor(KEY, SCOPE, SECRET);

    expect(() => decodeCursor(cursor, '["batch-results","B2"]', SECRET)).toThrow(CursorError);
  });

  it('refuses a cursor whose key was edited', () => {
    const [, signature] = encodeCursor(KEY, SCOPE, SECRET).split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...KEY, batch_id: 'OTHER' })).toString('base64url');

    expect(() => decodeCursor(`${forgedPayload}.${signature}`, SCOPE, SECRET)).toThrow(CursorError);
  });

  it('refuses a cursor signed with another secret', () => {
    const cursor = encodeCursor(KEY, SCOPE, 'o'.repeat(40));

    expect(() => decodeCursor(cursor, SCOPE, SECRET)).toThrow(CursorError);
  });

  it.each(['', 'abc', 'a.b.c', '....', 'eyJ9.x'])('refuses the malformed cursor %p', (cursor) => {
    expect(() => decodeCursor(cursor, SCOPE, SECRET)).toThrow(CursorError);
  });

  it('refuses a correctly signed payload that is not a key', () => {
    const payload = Buffer.from(JSON.stringify({ a: { nested: true } })).toString('base64url');
    const mac = createHmac('sha256', SECRET).update(`c1\n${SCOPE}\n${payload}`).digest('base64url');

    expect(() => decodeCursor(`${payload}.${mac}`, SCOPE, SECRET)).toThrow('malformed');
  });

  it('codec refuses a short secret at construction', () => {
    expect(() => cursorCodec('short')).toThrow(/at least 32/);
  });
});
