/** @type {import('jest').Config} */
// ESM-only packages (middy) are transpiled to CommonJS by swc like our own TypeScript.
const esmPackages = ['@middy'].join('|');
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest'] },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages})/)`],
  testTimeout: 60000,
};
