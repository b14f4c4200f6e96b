// `npm run test:aws`: the packaged stack deployed into moto and driven from its zips
// (docs/decisions/0037-artifact-on-moto.md). A jest configuration of its own: `npm test` never starts moto.
/** @type {import('jest').Config} */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
module.exports = {
  rootDir: '../..',
  displayName: 'aws',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/aws'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest'] },
  transformIgnorePatterns: ['/node_modules/(?!(@middy)/)'],
  maxWorkers: 1,
  testTimeout: 120000,
};
