// The rooms one level up from the files (docs/development.md's layer table): the folders of lib/, lib/store, local/
// and web/ import one another without a loop, so each stands on a floor above everything it imports. The file-level
// circles are the layers lint's (no-circular); a loop between folders can run through files that form no circle
// (batch/images.ts → image/x.ts while image/y.ts → batch/z.ts), which that rule does not see.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

const root = join(__dirname, '..', '..');

type Imports = ReadonlyMap<string, readonly string[]>;

/** Each source file of `dir` (relative to it) with the files of `dir` it imports by a relative path. */
function importsOf(dir: string): Imports {
  const files = readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => relative(join(root, dir), join(e.parentPath, e.name)));
  return new Map(
    files.map((file) => {
      const text = readFileSync(join(root, dir, file), 'utf8');
      const targets = [...text.matchAll(/\bfrom '(\.{1,2}\/[^']+)'/g)]
        .map((m) => normalize(join(dirname(file), m[1] ?? '')))
        .filter((target) => !target.startsWith('..'));
      return [file, targets];
    }),
  );
}

/** A file's folder, one level down (a file at the top stands as its own room). */
const roomOf = (file: string): string => file.split(sep)[0] ?? file;

/** Every import from one folder to another that a chain of imports leads back from: each one closes a loop. */
function loopingImports(imports: Imports): string[] {
  const rooms = new Map<string, Set<string>>();
  const edges: [string, string, string][] = [];
  for (const [file, targets] of imports) {
    for (const target of targets) {
      const [from, to] = [roomOf(file), roomOf(target)];
      if (from === to) continue;
      rooms.set(from, (rooms.get(from) ?? new Set()).add(to));
      edges.push([from, to, `${file} → ${target}`]);
    }
  }
  const reaches = (start: string, goal: string): boolean => {
    const seen = new Set<string>();
    const todo = [start];
    for (let room = todo.pop(); room !== undefined; room = todo.pop()) {
      if (room === goal) return true;
      for (const next of rooms.get(room) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        todo.push(next);
      }
    }
    return false;
  };
  return edges.filter(([from, to]) => reaches(to, from)).map(([, , how]) => how);
}

describe('the folders as rooms', () => {
  it.each(['lib', join('lib', 'store'), 'local', 'web'])('the folders of %s import one another without a loop', (dir) => {
    const imports = importsOf(dir);

    expect(imports.size).toBeGreaterThan(10);
    expect(loopingImports(imports)).toEqual([]);
  });

  it('finds a loop between folders whose files form no circle (the check can fail)', () => {
    const planted: Imports = new Map([
      [join('batch', 'images.ts'), [join('image', 'unprojected')]],
      [join('image', 'record.ts'), [join('batch', 'counters')]],
      [join('batch', 'counters.ts'), [join('table', 'schema')]],
      [join('image', 'unprojected.ts'), [join('table', 'query')]],
    ]);

    expect(loopingImports(planted)).toEqual([
      `${join('batch', 'images.ts')} → ${join('image', 'unprojected')}`,
      `${join('image', 'record.ts')} → ${join('batch', 'counters')}`,
    ]);
  });
});
