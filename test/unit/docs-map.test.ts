import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// The docs as a map: docs/design.md stays short enough to read whole, every place the code cites in it exists, and
// docs/development.md gives every function and every lib/ and local/ folder its line. Text only, no stack: fast.
const root = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const design = read('docs/design.md');
const development = read('docs/development.md');

/** The folders directly under `dir`, as `dir/name/`. */
const foldersOf = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `${dir}/${e.name}/`);

/** Every source and doc file under these folders (node_modules and build output left out). */
function filesUnder(dirs: readonly string[]): string[] {
  return dirs
    .filter((dir) => existsSync(join(root, dir)))
    .flatMap((dir) =>
      readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && /\.(ts|tsx|js|cjs|mjs|md|sh)$/.test(e.name))
        .map((e) => relative(root, join(e.parentPath, e.name)))
        .filter((file) => !/(^|\/)(node_modules|dist|\.build|\.serverless)\//.test(file)),
    );
}

const citingDirs = ['lib', 'functions', 'local', 'web', 'scripts', 'bin', 'test', 'bench', 'docs'];
const citingFiles = [...filesUnder(citingDirs), 'README.md'];

/** The numbers of design.md's `## N. …` headings. */
const sectionNumbers = new Set([...design.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
const anchors = new Set([...design.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));

test('docs/design.md is at most 460 lines', () => {
  expect(design.split('\n').length).toBeLessThanOrEqual(460);
});

test("design.md's sections are numbered in ascending order, from 1 (a number not built yet has no section)", () => {
  const numbers = [...design.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1]));
  expect(numbers[0]).toBe(1);
  expect(numbers).toEqual([...numbers].sort((a, b) => a - b).filter((n, i, all) => all.indexOf(n) === i));
});

test('every `design.md §N` cited in the code and the docs names a `## N.` heading of docs/design.md', () => {
  const dangling: string[] = [];
  for (const file of citingFiles) {
    // A citation may wrap onto the comment's next line: `docs/design.md\n// §9`.
    for (const m of read(file).matchAll(/design\.md(?:\s*(?:\/\/|\*|#))?\s*§ ?(\d+)/g)) {
      if (!sectionNumbers.has(Number(m[1]))) dangling.push(`${file}: ${m[0]}`);
    }
  }
  expect(dangling).toEqual([]);
});

test('every part of design.md cited by name ("Layers", "Export memory" …) is in it', () => {
  const missing: string[] = [];
  for (const file of citingFiles) {
    for (const m of read(file).matchAll(/design\.md(?: ?§ ?\d+)?,? "([^"]+)"/g)) {
      if (!design.includes(m[1] ?? '')) missing.push(`${file}: ${m[0]}`);
    }
  }
  expect(missing).toEqual([]);
});

test('every link to an anchor of design.md names one of its headings', () => {
  const broken: string[] = [];
  for (const file of citingFiles) {
    for (const m of read(file).matchAll(/design\.md#([\w-]+)/g)) {
      if (!anchors.has(m[1] ?? '')) broken.push(`${file}: ${m[0]}`);
    }
  }
  expect(broken).toEqual([]);
});

test('every decision record design.md links exists, and every record is listed in docs/decisions/README.md', () => {
  const linked = [...design.matchAll(/\]\(decisions\/([\w.-]+\.md)\)/g)].map((m) => m[1] ?? '');
  expect(linked.length).toBeGreaterThan(0);
  for (const file of linked) expect(existsSync(join(root, 'docs', 'decisions', file))).toBe(true);
  const index = read('docs/decisions/README.md');
  const records = readdirSync(join(root, 'docs', 'decisions')).filter((f) => /^\d{4}-.+\.md$/.test(f));
  expect(records.filter((f) => !index.includes(`(${f})`))).toEqual([]);
});

test('docs/development.md gives every function, every lib/ folder, local/ and its folders a line', () => {
  const folders = [...foldersOf('functions'), ...foldersOf('lib'), 'local/', ...foldersOf('local')];
  expect(folders.length).toBeGreaterThan(20);
  const lines = development.split('\n');
  const unlisted = folders.filter((folder) => !lines.some((line) => line.includes(`\`${folder}\``)));
  expect(unlisted).toEqual([]);
});
