import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The modules that read the environment, one per runtime, and lib/config.ts whose readers they use. */
const CONFIG_MODULES = ['lib/config.ts', 'functions/config.ts', 'lib/cli/config.ts', 'local/config.ts'];
/** lib/config.ts's fail-fast readers of the environment. */
const ENV_READERS = ['required', 'requiredSecret', 'envNumber', 'envBoolean', 'envString'];
/**
 * The getters the config modules build each runtime's configuration with (every exported function of theirs that reads
 * or writes the environment; test/unit/config-guard.test.ts fails when one is missing here), called only at the edges.
 */
const CONFIG_GETTERS = {
  'lib/config.ts': [
    'loadConfig',
    'loadIngestConfig',
    'loadAwsClientSettings',
    'loadTracingSettings',
    'maxUploadBytes',
    'pricePerImageUsd',
    'redetectPaging',
    'redetectResumeGraceMs',
  ],
  'functions/config.ts': [
    'loadCursorSecret',
    'loadApiConfig',
    'loadS3Settings',
    'loadS3OriginSettings',
    'loadExportConfig',
    'loadTableName',
    'queueUrl',
    'loadNotifyWiringSettings',
    'loadCallbackSigningKey',
    'loadNotifyConfig',
    'defaultClientLimits',
    'clientLimitsCacheMs',
    'callbackGraceSeconds',
    'loadReconcileConfig',
    'loadBatchOperationsSettings',
    'loadReconcileImports',
    'loadReconcileRedetect',
  ],
  'lib/cli/config.ts': ['loadCliConfig'],
  'local/config.ts': [
    'localPorts',
    'dataDirFromEnv',
    'bridgeUrl',
    'modelCacheSetting',
    'detectorEnvironment',
    'loadStackSettings',
    'loadClientCreateSettings',
    'reconcileSettingsFromEnv',
    'expiryIntervalMsFromEnv',
    'lowSpaceBytesFromEnv',
    'stopGraceMs',
    'javaHomeFromEnv',
    'applyEnv',
    'restoreEnv',
    'defaultEnv',
    'childEnv',
    'loadLocalConfig',
    'loadLocalFunctionSettings',
  ],
};
/** local/contract.ts's one reader of an environment map (its ports), for local/config.ts. */
const ENV_MAP_READERS = ['portsFromEnv'];
/**
 * Each runtime's edge, where its configuration is read once, with the getters, and handed down as one typed object:
 * every function's handler and app (functions/), the CLI's entry (lib/cli/main.ts), and the local stack's entries
 * and tools (npm start, the detector on its own, dead-letters, client:create).
 */
const EDGE_FILES = [
  'functions/**/*.ts',
  'lib/cli/main.ts',
  // npm start, and the stack the tests and benches start (startStack).
  'local/stack/start.ts',
  'local/stack/stack.ts',
  // The detector on its own (npm run detector), the operator's tools (npm run dead-letters, client:*) and
  // DynamoDB Local under test:strict: each its own process.
  'local/detector/main.ts',
  'local/detector/from-environment.ts',
  'local/detector/fetch-models.ts',
  'local/ops/*.ts',
  'local/dynamodb/dynamodb-local.ts',
];
/** The files the configuration rules hold; tests, bench/ and the sample events are tooling, outside them. */
const RUNTIME_FILES = [
  'lib/**/*.{ts,tsx}',
  'functions/**/*.ts',
  'local/**/*.ts',
  'web/**/*.{ts,tsx}',
  'scripts/**/*.{ts,cjs}',
  'bin/**/*.js',
];

const readersRefused = {
  regex: '(^|/)config$',
  importNames: ENV_READERS,
  message: "The environment's readers are for the config modules: take the setting from the runtime's config.",
};
const gettersRefused = [
  {
    regex: '(^|/)config$',
    importNames: [...new Set(Object.values(CONFIG_GETTERS).flat())],
    message:
      "Configuration is read at the runtime's edge (functions/, lib/cli/main.ts, local's entries) and handed down: take the value as a parameter.",
  },
  {
    regex: '(^|/)contract$',
    importNames: ENV_MAP_READERS,
    message: "Configuration is read at the runtime's edge and handed down: take the value as a parameter.",
  },
];
/** A config module imported at run time (`import()`) would slip past the named imports refused. */
const dynamicConfigRefused = {
  selector: 'ImportExpression[source.value=/(^|\\/)(config|contract)$/]',
  message: 'Import what you use of a config module by name, statically (the configuration rules check the names).',
};

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
    // docs/decisions/0046-store-by-entity-behind-ports.md: only lib/store (and lib/aws, which builds the client) sees
    // DynamoDB; every other module of lib/, functions/ and local/ asks the store through the narrow interface it
    // declares, and the wiring hands a store a TableRef (lib/store/table/access.ts); locally only local/dynamodb/, the
    // stand-in itself, speaks DynamoDB. The layers lint holds the same boundary.
    files: ['lib/**/*.{ts,tsx}', 'functions/**/*.ts', 'local/**/*.ts'],
    ignores: ['lib/store/**', 'lib/aws/**', 'local/dynamodb/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['@aws-sdk/lib-dynamodb', '@aws-sdk/client-dynamodb'].map((name) => ({
            name,
            message:
              'Only lib/store, lib/aws and local/dynamodb see DynamoDB: declare the interface you need and take a store (lib/store).',
          })),
        },
      ],
    },
  },
  {
    // Configuration read once per process (docs/decisions/0029-configuration-read-once.md): only each runtime's config
    // module reads the environment (lib/config.ts, whose fail-fast readers every runtime's config is built with;
    // functions/config.ts; lib/cli/config.ts; local/config.ts, which also writes the environment the stack applies).
    files: RUNTIME_FILES,
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
      // Configuration handed in (docs/decisions/0049-configuration-handed-in.md): below the edges, neither the readers
      // nor the config modules' getters; the edges (next block) may call the getters, never the readers.
      'no-restricted-imports': ['error', { patterns: [readersRefused, ...gettersRefused] }],
      'no-restricted-syntax': ['error', dynamicConfigRefused],
    },
  },
  {
    files: EDGE_FILES,
    ignores: CONFIG_MODULES,
    rules: { 'no-restricted-imports': ['error', { patterns: [readersRefused] }] },
  },
);
