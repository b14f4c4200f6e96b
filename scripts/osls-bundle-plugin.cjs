// osls loads plugins with require(); the plugin is TypeScript, so load it (and what it imports) through tsx,
// then stop, so nothing else osls requires goes through tsx.
/* eslint-disable @typescript-eslint/no-require-imports */
const { register } = require('tsx/cjs/api');

const unregister = register();
try {
  module.exports = require('./bundle-plugin.ts').default;
} finally {
  unregister();
}
