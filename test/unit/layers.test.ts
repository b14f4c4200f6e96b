import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

// The layer rules that `npm run lint` enforces (.dependency-cruiser.cjs, docs/design.md "Layers"), run on small
// trees with one import planted in them: an import against the layers fails, naming its rule.
const root = join(__dirname, '..', '..');
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

let tree: string;
beforeEach(() => {
  tree = mkdtempSync(join(tmpdir(), 'layers-'));
  writeFileSync(join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'preserve', moduleResolution: 'bundler' } }));
});
afterEach(() => rmSync(tree, { recursive: true, force: true }));

function plant(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
}

/** Runs the project's layer check on the planted tree: its exit code and what it printed. */
async function check(): Promise<{ code: number; output: string }> {
  const folders = readdirSync(tree).filter((name) => name !== 'tsconfig.json');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [depcruise, ...folders, '--config', config], { cwd: tree });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: `${e.stdout}${e.stderr}` };
  }
}

describe('the layer rules', () => {
  test('let the API import the store and the domain', async () => {
    plant({
      'lib/domain.ts': 'export interface Batch { batchId: string }\n',
      'lib/store/reader.ts': "import type { Batch } from '../domain';\nexport const read = (): Batch => ({ batchId: 'b' });\n",
      'lib/api/service.ts': "import { read } from '../store/reader';\nexport const get = () => read();\n",
    });
    const { code, output } = await check();
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('no dependency violations found') });
  });

  test('fail a store module that imports the API, naming the rule', async () => {
    plant({
      'lib/api/schemas.ts': 'export interface BatchSummary { batchId: string }\n',
      'lib/store/model.ts': "import type { BatchSummary } from '../api/schemas';\nexport type Summary = BatchSummary;\n",
    });
    const { code, output } = await check();
    expect(code).not.toBe(0);
    expect(output).toContain('adapters-not-up');
    expect(output).toContain('lib/store/model.ts → lib/api/schemas.ts');
  });

  test('fail a service that imports the API (notify presenting a batch through lib/api)', async () => {
    plant({
      'lib/api/present.ts': 'export const presentBatch = (id: string) => ({ batchId: id });\n',
      'lib/notify/wiring.ts': "import { presentBatch } from '../api/present';\nexport const summary = presentBatch('b');\n",
    });
    const { code, output } = await check();
    expect(code).not.toBe(0);
    expect(output).toContain('services-not-up');
  });

  test('fail run-time code that imports a build script', async () => {
    plant({
      'scripts/build-web.ts': 'export const build = () => 1;\n',
      'lib/web/bundle.ts': "import { build } from '../../scripts/build-web';\nexport const load = () => build();\n",
    });
    const { code, output } = await check();
    expect(code).not.toBe(0);
    expect(output).toContain('lib-not-up');
  });

  test('fail the domain module when it imports anything of the project', async () => {
    plant({
      'lib/ids.ts': 'export const newId = () => "x";\n',
      'lib/domain.ts': "import { newId } from './ids';\nexport const id = newId();\n",
    });
    const { code, output } = await check();
    expect(code).not.toBe(0);
    expect(output).toContain('domain-imports-nothing');
  });

  test('fail two modules that import each other', async () => {
    plant({
      'lib/ingest/errors.ts': "import type { Fingerprint } from './fingerprint';\nexport class Rejected extends Error { decoded?: Fingerprint }\n",
      'lib/ingest/fingerprint.ts': "import { Rejected } from './errors';\nexport interface Fingerprint { fprint: string }\nexport const fail = () => new Rejected();\n",
    });
    const { code, output } = await check();
    expect(code).not.toBe(0);
    expect(output).toContain('no-circular');
  });
});
