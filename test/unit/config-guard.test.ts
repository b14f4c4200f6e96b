import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

// Configuration read once per process (docs/decisions/0029-configuration-read-once.md): the ESLint rule that keeps
// process.env and lib/config.ts's readers inside the runtimes' config modules, run with the project's ESLint config
// on planted modules, which must fail naming the rules, and on the same text in a config module, which must pass.
const root = join(__dirname, '..', '..');

const READS = "import { envNumber } from '../config';\nexport const a = process.env.FOO;\nexport const b = envNumber('BAR', 1);\n";
const PLANTED = {
  'lib/notify/planted.ts': READS,
  'functions/planted/handler.ts': READS,
  'local/planted.ts': READS,
  'local/config.ts': READS.replace("'../config'", "'../lib/config'"),
};

/** The rules ESLint reports for each text linted as if it were that file of the repository (one ESLint process). */
async function rulesFor(files: Record<string, string>): Promise<Record<string, string[]>> {
  const script = `
    const { ESLint } = await import('eslint');
    const eslint = new ESLint({ cwd: process.cwd() });
    const files = JSON.parse(process.argv[1]);
    const out = {};
    for (const [filePath, text] of Object.entries(files)) {
      const [result] = await eslint.lintText(text, { filePath });
      out[filePath] = result.messages.map((m) => m.ruleId ?? 'parse');
    }
    console.log(JSON.stringify(out));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(files)], {
    cwd: root,
  });
  return JSON.parse(stdout) as Record<string, string[]>;
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
