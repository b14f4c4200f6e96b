// One test stack in a process of its own (test/global-setup.ts starts one per jest worker): the real handlers on free
// ports and a fresh data dir. It prints its environment as one JSON line once up, and stops on SIGTERM or when its
// parent goes away.
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStack } from '../local/stack/stack';
import { READY } from './global-setup';

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'icecat-test-'));
  const stack = await startStack({
    dataDir,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
    quiet: true,
    // Tests leave uploads behind on purpose (dead letters, refusals); a sweep would deliver them again under other
    // tests' feet. The sweep has tests of its own, on stacks of their own.
    reconcile: false,
    // Tests age batches on purpose and look at them before they are erased; the expiry sweep's own tests run it.
    expiry: false,
    // Test files upload the same fixtures again and again: the detector runs the model once per distinct image and
    // answers the rest from memory (every call is still counted, checked and open to faults; local/detector/memo.ts).
    detector: { memoEntries: 4096 },
  });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await stack.stop();
      if (!process.env.ICECAT_KEEP_TEST_DATA) await rm(dataDir, { recursive: true, force: true });
      process.exit(0);
    })());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The parent's end closes this pipe: a jest run killed mid-way leaves no stack behind.
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.stdout.write(`${READY} ${JSON.stringify({ env: stack.env, dataDir })}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
