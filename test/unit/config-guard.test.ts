import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as functionsConfig from '../../functions/config';
import * as cliConfig from '../../lib/cli/config';
import * as libConfig from '../../lib/config';
import * as localConfig from '../../local/config';

// Configuration read once per process (docs/decisions/0029-configuration-read-once.md): the ESLint rule that keeps
// process.env and lib/config.ts's readers inside the runtimes' config modules, run with the project's ESLint config
// on planted modules, which must fail naming the rules, and on the same text in a config module, which must pass.
// Configuration handed in (docs/decisions/0049-configuration-handed-in.md): the config modules' getters are called
// only at the runtimes' edges (functions/, lib/cli/main.ts, local's entries), never below them.
const root = join(__dirname, '..', '..');

const READS = "import { envNumber } from '../config';\nexport const a = process.env.FOO;\nexport const b = envNumber('BAR', 1);\n";
const PLANTED = {
  'lib/notify/planted.ts': READS,
  'functions/planted/handler.ts': READS,
  'local/planted.ts': READS,
  'local/config.ts': READS.replace("'../config'", "'../lib/config'"),
};

interface Reported {
  ruleId: string;
  message: string;
}

/** What ESLint reports for each text linted as if it were that file of the repository (one ESLint process). */
async function reportsFor(files: Record<string, string>): Promise<Record<string, Reported[]>> {
  const script = `
    const { ESLint } = await import('eslint');
    const eslint = new ESLint({ cwd: process.cwd() });
    const files = JSON.parse(process.argv[1]);
    const out = {};
    for (const [filePath, text] of Object.entries(files)) {
      const [result] = await eslint.lintText(text, { filePath });
      out[filePath] = result.messages.map((m) => ({ ruleId: m.ruleId ?? 'parse', message: m.message }));
    }
    console.log(JSON.stringify(out));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(files)], {
    cwd: root,
  });
  return JSON.parse(stdout) as Record<string, Reported[]>;
}

/** The rules ESLint reports for each text. */
async function rulesFor(files: Record<string, string>): Promise<Record<string, string[]>> {
  const reports = await reportsFor(files);
  return Object.fromEntries(Object.entries(reports).map(([path, found]) => [path, found.map((r) => r.ruleId)]));
}

test('only the config modules read process.env or import the env readers', async () => {
  // Act
  const rules = await rulesFor(PLANTED);

  // Assert
  for (const path of ['lib/notify/planted.ts', 'functions/planted/handler.ts', 'local/planted.ts']) {
    expect({ path, rules: rules[path] }).toEqual({
      path,
      rules: expect.arrayContaining(['no-restricted-properties', 'no-restricted-imports']),
    });
  }
  expect(rules['local/config.ts']).not.toContain('no-restricted-properties');
  expect(rules['local/config.ts']).not.toContain('no-restricted-imports');
}, 60_000);

/** The config modules, each with its exports that read no environment (pure functions of what they are given). */
const CONFIG_MODULES = [
  { path: 'lib/config.ts', from: '../config', exports: libConfig, pure: [] as string[] },
  { path: 'functions/config.ts', from: '../../functions/config', exports: functionsConfig, pure: [] as string[] },
  { path: 'lib/cli/config.ts', from: '../cli/config', exports: cliConfig, pure: ['resolveConnection'] },
  { path: 'local/config.ts', from: '../../local/config', exports: localConfig, pure: [] as string[] },
];
const READERS = ['required', 'requiredSecret', 'envNumber', 'envBoolean', 'envString'];
/** Every exported function of a config module that reads (or writes) the environment. */
const gettersOf = (m: (typeof CONFIG_MODULES)[number]): string[] =>
  Object.entries(m.exports)
    .filter(([name, value]) => typeof value === 'function' && !/^[A-Z]/.test(name) && !m.pure.includes(name) && !READERS.includes(name))
    .map(([name]) => name);

describe("the config modules' getters are called only at the runtimes' edges", () => {
  const CALL = "import { pricePerImageUsd } from '../config';\nexport const price = pricePerImageUsd();\n";
  let reports: Record<string, Reported[]>;
  beforeAll(async () => {
    reports = await reportsFor({
      // Planted below the edges: the price read deep in the API and in the AWS clients, a port read from an env map
      // in the CLI, and a config module imported at run time.
      'lib/api/planted.ts': CALL,
      'lib/aws/planted.ts': "export const settings = async () => (await import('../config')).loadAwsClientSettings();\n",
      'lib/cli/planted.ts': "import { portsFromEnv } from '../../local/contract';\nexport const ports = portsFromEnv({});\n",
      // At an edge: a function's handler and the CLI's entry may call the getters (never the readers).
      'functions/planted/handler.ts': CALL.replace("'../config'", "'../../lib/config'"),
      'lib/cli/main.ts': "import { loadCliConfig } from './config';\nexport const config = loadCliConfig();\n",
      'functions/planted/app.ts': "import { envNumber } from '../../lib/config';\nexport const n = envNumber('N', 1);\n",
      // Every getter of every config module, imported by name below the edges: each must be refused.
      ...Object.fromEntries(
        CONFIG_MODULES.map((m, i) => [
          `lib/notify/planted-${i}.ts`,
          `import { ${gettersOf(m).join(', ')} } from '${m.from}';\nexport const all = [${gettersOf(m).join(', ')}];\n`,
        ]),
      ),
    });
  }, 60_000);

  it('refuses them below the edges, naming the rule', () => {
    expect(reports['lib/api/planted.ts']?.map((r) => r.ruleId)).toEqual(['no-restricted-imports']);
    expect(reports['lib/api/planted.ts']?.[0]?.message).toMatch(/'pricePerImageUsd' import from '..\/config' is restricted/);
    expect(reports['lib/aws/planted.ts']?.map((r) => r.ruleId)).toEqual(['no-restricted-syntax']);
    expect(reports['lib/cli/planted.ts']?.map((r) => r.ruleId)).toEqual(['no-restricted-imports']);
  });

  it('lets the edges call them, and still refuses the readers there', () => {
    expect(reports['functions/planted/handler.ts']).toEqual([]);
    expect(reports['lib/cli/main.ts']).toEqual([]);
    expect(reports['functions/planted/app.ts']?.map((r) => r.ruleId)).toEqual(['no-restricted-imports']);
  });

  it.each(CONFIG_MODULES.map((m, i) => [m.path, i, m] as const))('refuses every getter of %s', (_path, i, m) => {
    const refused = (reports[`lib/notify/planted-${i}.ts`] ?? []).filter((r) => r.ruleId === 'no-restricted-imports');
    const names = gettersOf(m);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !refused.some((r) => r.message.startsWith(`'${name}' import`)))).toEqual([]);
  });
});
