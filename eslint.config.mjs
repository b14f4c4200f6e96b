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
    // Small rooms: a file holds at most 400 lines, a function at most 80, blank lines and comments not counted.
    files: ['lib/**/*.{ts,tsx}', 'functions/**/*.{ts,tsx}', 'local/**/*.{ts,tsx}', 'web/**/*.{ts,tsx}', 'scripts/**/*.{ts,tsx}'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Tables, where the length is the point: the API's route table and its schemas, the detector's COCO classes and
    // the label taxonomy they map onto.
    files: ['lib/api/routes.ts', 'lib/api/schemas.ts', 'local/detector/labels.ts'],
    rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' },
  },
  {
    // docs/decisions/0046-store-by-entity-behind-ports.md: only lib/store (and lib/aws, which builds the client) sees
    // DynamoDB; every other module of lib/ and functions/ asks the store through the narrow interface it declares, and
    // the wiring hands a store a TableRef (lib/store/table/access.ts). The layers lint holds the same boundary.
    files: ['lib/**/*.{ts,tsx}', 'functions/**/*.ts'],
    ignores: ['lib/store/**', 'lib/aws/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['@aws-sdk/lib-dynamodb', '@aws-sdk/client-dynamodb'].map((name) => ({
            name,
            message: 'Only lib/store and lib/aws see DynamoDB: declare the interface you need and take a store (lib/store).',
          })),
        },
      ],
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
