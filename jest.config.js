/** @type {import('jest').Config} */
// The SDK's notice that its 2027 releases need Node 22 is printed once per process; tests start dozens of them.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// ESM-only packages (middy) are transpiled to CommonJS by swc like our own TypeScript.
const esmPackages = ['@middy'].join('|');
const shared = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest'] },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages})/)`],
};
/**
 * Integration files whose subject is not the store's writes, or which need a DynamoDB of their own: they run on
 * dynalite (the stack's own backend) only. Every other integration file runs on DynamoDB Local, which refuses what AWS
 * refuses and dynalite accepts (docs/decisions/0044-store-files-on-the-strict-backend.md): the stand-ins' own files
 * (detector, local S3, gateway, control routes, metrics, disk full), the CLI and client tools (they reach the store
 * through the API), the thumbnails, the model switch, the IAM stack, and the trials of `npm start` (crash, paging,
 * import crash, stack, cost), whose spawned stacks count the day's usage of their own client on a DynamoDB of their own.
 */
const DYNALITE_ONLY = [
  '/detector',
  '/local-s3',
  '/model-switch',
  '/redetect-crash',
  '/cli',
  '/api-client',
  '/disk-full',
  '/dynalite-full-disk',
  '/stack-metrics',
  '/dashboard-metrics',
  '/thumbnails',
  '/stack-gateway',
  '/control-routes',
  '/redetect-pages',
  '/stack-crash',
  '/iam.test',
  '/import-crash',
  '/stack.test',
  '/cost.test',
];
const integration = {
  ...shared,
  roots: ['<rootDir>/test/integration'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};
// Projects so that a local stack starts only when a test that needs it runs: jest runs a project's globalSetup only
// if at least one of its tests is selected. `npm run test:strict` runs every integration file on DynamoDB Local.
module.exports = {
  testTimeout: 60000,
  // Two files at a time even on 2 cores: most integration time is spent waiting on the stack, not computing. Each
  // worker has a local stack of its own (test/global-setup.ts), so a file that counts DetectLabels calls or injects
  // a detector fault never shares its stack. One worker per core (jest's default leaves one core out).
  maxWorkers: '100%',
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/test'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/', '<rootDir>/test/browser/', '<rootDir>/test/aws/'],
    },
    {
      // On dynalite, the stack's own backend (on DynamoDB Local too under `npm run test:strict`).
      ...integration,
      displayName: 'integration',
      setupFiles: ['<rootDir>/test/stack-env.ts'],
      testMatch: undefined,
      // A file is this project's when DYNALITE_ONLY's pattern matches its path, as the strict project ignores it (every
      // .ts file under test/integration is a test file).
      testRegex: `(${DYNALITE_ONLY.map((part) => part.replace(/[.]/g, '\\.')).join('|')})[^/]*\\.ts$`,
    },
    {
      // The store's writes on DynamoDB Local, each worker's stack on it (test/global-setup-strict.ts).
      ...integration,
      displayName: 'strict',
      setupFiles: ['<rootDir>/test/stack-env-strict.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...DYNALITE_ONLY],
      globalSetup: '<rootDir>/test/global-setup-strict.ts',
      globalTeardown: '<rootDir>/test/global-teardown-strict.ts',
    },
    {
      // The web app in Debian's Chromium, against the same local stack.
      ...shared,
      displayName: 'browser',
      roots: ['<rootDir>/test/browser'],
      setupFiles: ['<rootDir>/test/stack-env.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
  ],
};
