// osls loads plugins with require(); the plugin is TypeScript, so load it (and what it imports) through tsx,
// then stop, so nothing else osls requires goes through tsx.
/* eslint-disable @typescript-eslint/no-require-imports */
/* global module, require */
const { register } = require('tsx/cjs/api');

const unregister = register();
try {
  module.exports = require('./osls-bundle-plugin.ts').default;
} finally {
  unregister();
}
