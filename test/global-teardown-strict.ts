// Stops the strict project's stacks, then its DynamoDB Local (test/global-setup-strict.ts).
import { stopStackServers } from './global-setup';

export default async function globalTeardownStrict(): Promise<void> {
  const strict = globalThis.__ICECAT_STRICT__;
  globalThis.__ICECAT_STRICT__ = undefined;
  if (!strict) return;
  await stopStackServers(strict.stacks);
  await strict.dynamodb?.stop();
}
