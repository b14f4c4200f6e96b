import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The modules that read the environment, one per runtime, and lib/config.ts whose readers they use. */
const CONFIG_MODULES = ['lib/config.ts', 'functions/config.ts', 'lib/cli/config.ts', 'local/config.ts'];
/** lib/config.ts's fail-fast readers of the environment. */
const ENV_READERS = ['required', 'requiredSecret', 'envNumber', 'envBoolean', 'envString'];

export default tseslint.config(
  { ignores: ['node_modules/', '.serverless/', '.build/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { __dirname: 'readonly', __filename: 'readonly', process: 'readonly', console: 'readonly' },
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Small rooms: a file holds at most 400 lines, a function at most 80, raw lines as `wc -l` counts them (blank lines
    // and comments counted too). No file is exempt: the route table and the schemas are one file per resource, the
    // detector's label taxonomy (local/detector/taxonomy.ts, data only) fits.
    files: ['lib/**/*.{ts,tsx}', 'functions/**/*.{ts,tsx}', 'local/**/*.{ts,tsx}', 'web/**/*.{ts,tsx}', 'scripts/**/*.{ts,tsx,cjs}'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Configuration read once per process (docs/decisions/0029-configuration-read-once.md): only each runtime's config
    // module reads the environment (lib/config.ts, whose fail-fast readers every runtime's config is built with;
    // functions/config.ts; lib/cli/config.ts; local/config.ts, which also writes the environment the stack applies).
    // Tests, bench/ and the sample events are tooling, outside the rule.
    files: ['lib/**/*.{ts,tsx}', 'functions/**/*.ts', 'local/**/*.ts', 'web/**/*.{ts,tsx}', 'scripts/**/*.{ts,cjs}', 'bin/**/*.js'],
    ignores: CONFIG_MODULES,
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: "Read configuration through the runtime's config module (functions/config.ts, lib/cli/config.ts, local/config.ts).",
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)config$',
              importNames: ENV_READERS,
              message: "The environment's readers are for the config modules: take the setting from the runtime's config.",
            },
          ],
        },
      ],
    },
  },
);
