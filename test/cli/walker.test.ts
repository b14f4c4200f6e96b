import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkInputs, type SkippedEntry, type WalkedFile, WalkInputError, walkFiles } from '../../lib/cli/walker';

let root: string;

const write = (rel: string, content = 'x') => {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), content);
};

async function walk(inputs: string[], includeHidden = false): Promise<{ files: WalkedFile[]; skipped: SkippedEntry[] }> {
  const files: WalkedFile[] = [];
  const skipped: SkippedEntry[] = [];
  for await (const f of walkFiles(inputs, { includeHidden, onSkip: (s) => skipped.push(s) })) files.push(f);
  return { files, skipped };
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'icecat-walk-'));
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('walkFiles', () => {
  it('names files by the walked folder and its sub-folders, in sorted order', async () => {
    write('trip/day2/b.jpg', 'bb');
    write('trip/day1/a.jpg', 'a');
    write('trip/c.png');

    const { files } = await walk([path.join(root, 'trip')]);

    expect(files.map((f) => [f.name, f.size])).toEqual([
      ['trip/c.png', 1],
      ['trip/day1/a.jpg', 1],
      ['trip/day2/b.jpg', 2],
    ]);
    expect(files[1]?.path).toBe(path.join(root, 'trip', 'day1', 'a.jpg'));
  });

  it('names the files of a folder given with a trailing slash by the path below it, as rsync does', async () => {
    write('trip/day1/a.jpg', 'a');
    write('trip/c.png');

    const { files } = await walk([`${path.join(root, 'trip')}/`]);

    expect(files.map((f) => f.name)).toEqual(['c.png', 'day1/a.jpg']);
    expect(files[1]?.path).toBe(path.join(root, 'trip', 'day1', 'a.jpg'));
  });

  it('names a file given directly by its base name', async () => {
    write('deep/down/cat.jpg');

    const { files } = await walk([path.join(root, 'deep/down/cat.jpg')]);

    expect(files.map((f) => f.name)).toEqual(['cat.jpg']);
  });

  it('follows a link to a folder but never walks a folder twice, so a link back up ends there', async () => {
    write('trip/a.jpg');
    write('elsewhere/b.jpg');
    symlinkSync('..', path.join(root, 'trip', 'up'));
    symlinkSync(path.join(root, 'elsewhere'), path.join(root, 'trip', 'linked'));

    const { files, skipped } = await walk([path.join(root, 'trip')]);

    expect(files.map((f) => f.name)).toEqual(['trip/a.jpg', 'trip/linked/b.jpg']);
    expect(skipped.map((s) => [path.relative(root, s.path), s.reason])).toEqual([
      ['trip/up/elsewhere', 'symlink-loop'],
      ['trip/up/trip', 'symlink-loop'],
    ]);
  });

  it('skips a link that points at itself as a broken link, with the name it would have had', async () => {
    write('trip/a.jpg');
    symlinkSync('self', path.join(root, 'trip', 'self'));

    const { files, skipped } = await walk([path.join(root, 'trip')]);

    expect(files.map((f) => f.name)).toEqual(['trip/a.jpg']);
    expect(skipped).toEqual([expect.objectContaining({ name: 'trip/self', reason: 'broken-link', detail: 'ELOOP' })]);
  });

  it('skips FIFOs and dangling links, reporting each', async () => {
    write('trip/a.jpg');
    execFileSync('mkfifo', [path.join(root, 'trip', 'pipe')]);
    symlinkSync('missing.jpg', path.join(root, 'trip', 'dangling.jpg'));

    const { files, skipped } = await walk([path.join(root, 'trip')]);

    expect(files.map((f) => f.name)).toEqual(['trip/a.jpg']);
    expect(skipped.map((s) => [path.basename(s.path), s.name, s.reason])).toEqual([
      ['dangling.jpg', 'trip/dangling.jpg', 'broken-link'],
      ['pipe', 'trip/pipe', 'not-a-file'],
    ]);
  });

  it('skips a name that is not valid UTF-8, showing its bad bytes escaped, and walks on', async () => {
    write('trip/a.jpg');
    // "caf\xe9.jpg": Latin-1, as an old camera or a Windows share may have written it.
    writeFileSync(Buffer.concat([Buffer.from(path.join(root, 'trip', 'caf')), Buffer.from([0xe9]), Buffer.from('.jpg')]), 'x');

    const { files, skipped } = await walk([path.join(root, 'trip')]);

    expect(files.map((f) => f.name)).toEqual(['trip/a.jpg']);
    expect(skipped).toEqual([
      { path: path.join(root, 'trip', 'caf\\xE9.jpg'), name: 'trip/caf\\xE9.jpg', reason: 'invalid-name', detail: 'not valid UTF-8' },
    ]);
  });

  it('leaves dot-files and dot-folders out unless asked', async () => {
    write('trip/.DS_Store');
    write('trip/.git/config');
    write('trip/a.jpg');

    expect((await walk([path.join(root, 'trip')])).files.map((f) => f.name)).toEqual(['trip/a.jpg']);
    expect((await walk([path.join(root, 'trip')], true)).files.map((f) => f.name)).toEqual([
      'trip/.DS_Store',
      'trip/.git/config',
      'trip/a.jpg',
    ]);
  });

  it('walks a folder reached twice only once', async () => {
    write('trip/a.jpg');

    const { files } = await walk([path.join(root, 'trip'), path.join(root, 'trip')]);

    expect(files.map((f) => f.name)).toEqual(['trip/a.jpg']);
  });

  it('refuses an input that does not exist, naming it', async () => {
    await expect(walk([path.join(root, 'nope')])).rejects.toThrow(WalkInputError);
    await expect(walk([path.join(root, 'nope')])).rejects.toThrow(/nope: ENOENT/);
  });

  it('checks every input before a walk, refusing the first one that does not exist', async () => {
    write('a.jpg');

    await expect(checkInputs([path.join(root, 'a.jpg'), path.join(root, 'nope')])).rejects.toThrow(/nope: ENOENT/);
    await expect(checkInputs([path.join(root, 'a.jpg')])).resolves.toBeUndefined();
  });
});
