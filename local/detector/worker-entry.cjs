// The entry of a detector worker (a thread or a child process). Plain CommonJS, so it starts the same under
// `node --import tsx`, `npx tsx` and jest (whose transform does not reach worker threads): it registers tsx's
// CommonJS hook, then loads the TypeScript worker.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- run by node as is, before any TypeScript loader */
require('tsx/cjs/api').register();
require('./worker.ts');
