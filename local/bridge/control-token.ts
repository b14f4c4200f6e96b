// The token that the bridge's control routes (POST /pause, /resume, /dead-letters/redrive, /reconcile) require: made at
// the stack's first start into its data dir, readable by its owner only (0600), and read from there by the operator's
// commands (`npm run dead-letters`). Anything else on this machine (a completion callback, a page in a browser) can
// reach the bridge's port but cannot act on every client's work.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Where a data dir keeps the control token. */
export const controlTokenFile = (dataDir: string): string => path.join(dataDir, 'control-token');

export const generateControlToken = (): string => randomBytes(32).toString('base64url');

/** The header the control routes want, read from the data dir; fails naming the file when there is none. */
export function controlHeaders(dataDir: string): { authorization: string } {
  const file = controlTokenFile(dataDir);
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(
      `cannot read the local stack's control token at ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)}): ` +
        'run this as the user who runs `npm start`, with ICECAT_DATA_DIR set to its data dir',
      { cause: err },
    );
  }
  return { authorization: `Bearer ${token}` };
}

/** Whether an Authorization header carries `token` (compared in constant time). */
export function carriesToken(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
