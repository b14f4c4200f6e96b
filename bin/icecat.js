#!/usr/bin/env node
// The `icecat` command: the CLI is TypeScript, loaded through tsx's require hook so Node 20 runs it without a build.
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS launcher, run by node as is */
'use strict';
require('tsx/cjs/api').register();
require('../lib/cli/main.ts').runCli();
