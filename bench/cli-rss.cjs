// Preloaded into the CLI by bench/cli.bench.ts (node -r): writes the process's peak resident set size, in KB, to the
// file named by ICECAT_BENCH_RSS_FILE when it exits.
'use strict';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a preload script, run by node as is
const { writeFileSync } = require('node:fs');
process.on('exit', () => {
  writeFileSync(process.env.ICECAT_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS));
});
