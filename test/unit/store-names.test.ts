import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EXPORT_COLUMNS } from '../../lib/export/rows';
import { BATCH_ATTRIBUTES, COUNTER_ATTRIBUTES, IMAGE_ATTRIBUTES, UPLOAD_ATTRIBUTES } from '../../lib/store/table/attributes';

// docs/design.md §2: lib/store is the only code that knows the table's attribute names; everything else speaks the
// domain's. A stored name that is also a domain name (`labels`, `phash`) says nothing, so only the names the table
// alone uses are looked for, as they would appear in code: quoted, or after `.`, `#` or `:`.
const root = join(__dirname, '..', '..');
const domainNames = new Set<string>([
  ...Object.keys(IMAGE_ATTRIBUTES),
  ...Object.keys(BATCH_ATTRIBUTES),
  ...Object.keys(UPLOAD_ATTRIBUTES),
  ...Object.keys(COUNTER_ATTRIBUTES),
]);
const storedNames = [
  ...new Set([
    ...Object.values(IMAGE_ATTRIBUTES),
    ...Object.values(BATCH_ATTRIBUTES),
    ...Object.values(UPLOAD_ATTRIBUTES),
    ...Object.values(COUNTER_ATTRIBUTES),
    // The key and client items' own (lib/store/client/keys.ts, registrations.ts).
    'owner_id',
    'registered_ts',
  ]),
].filter((name) => !domainNames.has(name));
/** The export's CSV columns are the API's names (docs/api.md), not the table's: `file_name` is both. */
const apiColumns = new Set<string>(EXPORT_COLUMNS);

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx)$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

test('no code outside lib/store names a stored attribute', () => {
  const files = ['lib', 'functions', 'local', 'web'].flatMap(sources).filter((file) => !file.startsWith('lib/store/'));
  const named: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
      for (const name of storedNames) {
        if (file.startsWith('lib/export/') && apiColumns.has(name)) continue;
        if (new RegExp(`(['"\`.#:])${name}\\b`).test(line)) named.push(`${file}:${i + 1}: ${name}`);
      }
    });
  }
  expect(named).toEqual([]);
});

test('the check knows the names it looks for', () => {
  expect(storedNames).toEqual(expect.arrayContaining(['img_fprint', 'batch_id', 'file_name', 'owner_id', 'registered_ts', 'n_pending']));
});
