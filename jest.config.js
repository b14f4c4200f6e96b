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
// Two projects so that the local stack starts only when an integration test runs: jest runs a project's
// globalSetup only if at least one of its tests is selected.
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
      ...shared,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      setupFiles: ['<rootDir>/test/stack-env.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
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
