// A silent local S3 runs without s3rver's request logger (koa-logger): it formatted a line for every request into a
// silent transport and piped every streamed body through a byte counter for it (docs/design.md §9).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropRequestLogger } from '../../local/s3/s3';

// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { middleware: { name: string }[] };

describe("the local S3's request logger", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'icecat-s3-logger-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is removed, and only it, from a server that logs nothing', () => {
    const server = new S3rver({ directory: dir, silent: true });
    const before = server.middleware.map((fn) => fn.name);
    expect(before).toContain('logger');
    expect(dropRequestLogger(server)).toBe(true);
    expect(server.middleware.map((fn) => fn.name)).toEqual(before.filter((name) => name !== 'logger'));
  });

  it('leaves a server without one as it is', () => {
    const server = { middleware: [{ name: 'signature' }, { name: 'dispatch' }] };
    expect(dropRequestLogger(server)).toBe(false);
    expect(server.middleware.map((fn) => fn.name)).toEqual(['signature', 'dispatch']);
  });
});
