import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

// The layer rules that `npm run lint` enforces (.dependency-cruiser.cjs, docs/design.md "Layers"), run as the lint
// runs them on small trees: one that keeps the layers, and one with a wrong-way import planted for each rule, each of
// which must fail, naming its rule and the import.
const root = join(__dirname, '..', '..');
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

function plant(files: Record<string, string>): string {
  const tree = mkdtempSync(join(tmpdir(), 'layers-'));
  writeFileSync(join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'preserve', moduleResolution: 'bundler' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
  return tree;
}

/** Runs the project's layer check on a planted tree: its exit code and what it printed. */
async function check(tree: string): Promise<{ code: number; output: string }> {
  const folders = readdirSync(tree).filter((name) => name !== 'tsconfig.json' && name !== 'node_modules');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [depcruise, ...folders, '--config', config], { cwd: tree });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: `${e.stdout}${e.stderr}` };
  }
}

const trees: string[] = [];
afterAll(() => {
  for (const tree of trees) rmSync(tree, { recursive: true, force: true });
});

test('the layer rules let the API import the store and the store the domain', async () => {
  const tree = plant({
    'lib/domain/batch.ts': 'export interface Batch { batchId: string }\n',
    'lib/domain/summary.ts': "import type { Batch } from './batch';\nexport type Summary = Batch;\n",
    'lib/store/reader.ts': "import type { Batch } from '../domain/batch';\nexport const read = (): Batch => ({ batchId: 'b' });\n",
    'lib/api/service.ts': "import { read } from '../store/reader';\nexport const get = () => read();\n",
    'functions/api/handler.ts': "import { get } from '../../lib/api/service';\nexport const handler = () => get();\n",
  });
  trees.push(tree);

  const { code, output } = await check(tree);

  expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('no dependency violations found') });
});

describe('a planted wrong-way import fails the lint, naming its rule', () => {
  let result: { code: number; output: string };
  beforeAll(async () => {
    const tree = plant({
      // The store importing the API (a type only: type imports count).
      'lib/api/schemas.ts': 'export interface BatchSummary { batchId: string }\n',
      'lib/store/model.ts': "import type { BatchSummary } from '../api/schemas';\nexport type Summary = BatchSummary;\n",
      // A service importing the API (notify presenting a batch through lib/api).
      'lib/api/present.ts': 'export const presentBatch = (id: string) => ({ batchId: id });\n',
      'lib/notify/wiring.ts': "import { presentBatch } from '../api/present';\nexport const summary = presentBatch('b');\n",
      // Run-time code importing a build script.
      'scripts/build-web.ts': 'export const build = () => 1;\n',
      'lib/web/bundle.ts': "import { build } from '../../scripts/build-web';\nexport const load = () => build();\n",
      // The domain module importing anything of the project.
      'lib/ids.ts': 'export const newId = () => "x";\n',
      'lib/domain/batch.ts': "import { newId } from '../ids';\nexport const id = newId();\n",
      // A service sending a DynamoDB request itself instead of asking the store, and one holding the client by its type
      // (a type-only import counts too: docs/decisions/0046); the package planted as a stand-in, as an import is
      // type-only only once it resolves.
      'node_modules/@aws-sdk/lib-dynamodb/package.json': '{ "name": "@aws-sdk/lib-dynamodb", "main": "index.js", "types": "index.d.ts" }\n',
      'node_modules/@aws-sdk/lib-dynamodb/index.js': 'exports.DeleteCommand = class {};\n',
      'node_modules/@aws-sdk/lib-dynamodb/index.d.ts':
        'export declare class DeleteCommand { constructor(input: object) }\nexport interface DynamoDBDocumentClient { send(c: object): Promise<unknown> }\n',
      'lib/erase/items.ts':
        "import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';\n" +
        'export const drop = (ddb: DynamoDBDocumentClient) => ddb.send(new DeleteCommand({ TableName: "T", Key: {} }));\n',
      // The store holding the client is its job.
      'lib/store/batch/summary.ts':
        "import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';\nexport type Held = { ddb: DynamoDBDocumentClient };\n",
      'lib/erase/job.ts':
        "import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';\nexport type Deps = { ddb: DynamoDBDocumentClient };\n",
      // The local stack building its own document client rather than lib/aws's; the local DynamoDB itself may.
      'local/stack/expiry.ts':
        "import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';\nexport type Deps = { ddb: DynamoDBDocumentClient };\n",
      'local/dynamodb/dynamodb.ts':
        "import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';\nexport type Held = { ddb: DynamoDBDocumentClient };\n",
      // local/'s floor importing one of its rooms (the stack's contract reading the detector's thresholds), and a room
      // importing the stack that composes it.
      'local/detector/thresholds.ts': 'export const LOCAL_CAT_MIN_CONFIDENCE = 80;\n',
      'local/contract.ts':
        "import { LOCAL_CAT_MIN_CONFIDENCE } from './detector/thresholds';\nexport const catMin = LOCAL_CAT_MIN_CONFIDENCE;\n",
      'local/stack/types.ts': 'export interface StackPorts { api: number }\n',
      'local/queue/queue.ts': "import type { StackPorts } from '../stack/types';\nexport type Ports = StackPorts;\n",
      // Two modules importing each other.
      'lib/ingest/errors.ts':
        "import type { Fingerprint } from './fingerprint';\nexport class Rejected extends Error { decoded?: Fingerprint }\n",
      'lib/ingest/fingerprint.ts':
        "import { Rejected } from './errors';\nexport interface Fingerprint { fprint: string }\nexport const fail = () => new Rejected();\n",
    });
    trees.push(tree);
    result = await check(tree);
  });

  test('the check fails', () => {
    expect(result.code).not.toBe(0);
  });

  test.each([
    ['adapters-not-up', 'lib/store/model.ts → lib/api/schemas.ts'],
    ['services-not-up', 'lib/notify/wiring.ts → lib/api/present.ts'],
    ['lib-not-up', 'lib/web/bundle.ts → scripts/build-web.ts'],
    ['domain-imports-nothing', 'lib/domain/batch.ts → lib/ids.ts'],
    ['no-circular', 'lib/ingest/errors.ts → lib/ingest/fingerprint.ts'],
    ['dynamodb-through-the-store', 'lib/erase/items.ts → node_modules/@aws-sdk/lib-dynamodb/index.js'],
    ['local-floor-not-up', 'local/contract.ts → local/detector/thresholds.ts'],
    ['local-stack-on-top', 'local/queue/queue.ts → local/stack/types.ts'],
    ['dynamodb-through-the-store', 'lib/erase/job.ts → node_modules/@aws-sdk/lib-dynamodb/index.js'],
    ['dynamodb-through-the-store', 'local/stack/expiry.ts → node_modules/@aws-sdk/lib-dynamodb/index.js'],
  ])('%s: %s', (rule, edge) => {
    const [from, to] = edge.split(' → ') as [string, string];
    expect(result.output).toMatch(new RegExp(`${rule}: ${from} →\\s+${to}`));
  });

  test('the store itself may import the DynamoDB client', () => {
    expect(result.output).not.toMatch(/dynamodb-through-the-store: (lib\/store|local\/dynamodb)\//);
  });
});

describe('the lint rule holding DynamoDB inside lib/store, lib/aws and local/dynamodb (eslint.config.mjs)', () => {
  const eslint = join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const planted =
    "import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';\nexport type Deps = { ddb: DynamoDBDocumentClient };\n";
  /** The rules ESLint, run as the lint runs it, reports on the planted import as if it were `file`. */
  async function rulesAt(file: string): Promise<string[]> {
    const run = promisify(execFile)(process.execPath, [eslint, '--stdin', '--stdin-filename', file, '--format', 'json'], { cwd: root });
    run.child.stdin?.end(planted);
    const stdout = await run.then(
      (out) => out.stdout,
      (error: { stdout: string }) => error.stdout,
    );
    return (JSON.parse(stdout) as { messages: { ruleId: string }[] }[]).flatMap((r) => r.messages.map((m) => m.ruleId));
  }

  test.each(['lib/erase/planted.ts', 'functions/erase/planted.ts', 'local/stack/planted.ts', 'local/ops/planted.ts'])(
    'fails a planted import in %s',
    async (file) => {
      expect(await rulesAt(file)).toContain('@typescript-eslint/no-restricted-imports');
    },
  );

  test.each(['lib/store/batch/planted.ts', 'local/dynamodb/planted.ts'])('lets %s import it', async (file) => {
    expect(await rulesAt(file)).not.toContain('@typescript-eslint/no-restricted-imports');
  });
});
