// Stops the stack the global setup started and removes its data dir.
import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__ICECAT_STACK__;
  if (!stack) return;
  globalThis.__ICECAT_STACK__ = undefined;
  await stack.stop();
  if (!process.env.ICECAT_KEEP_TEST_DATA) await rm(stack.dataDir, { recursive: true, force: true });
}
