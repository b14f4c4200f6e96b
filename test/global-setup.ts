// Starts the local stack once for the integration tests: free ports, a fresh data dir, the real handlers.
// Its environment is set on process.env before jest forks its workers, so every test file inherits it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStack } from '../local/stack';
import type { Stack } from '../local/stack-types';

declare global {
  var __ICECAT_STACK__: Stack | undefined;
}

/**
 * Test-run settings the handlers read at import: a 10 MiB upload cap keeps the too-large case cheap, and three
 * DetectLabels attempts keep the throttling-outlasts-retries case short.
 */
const TEST_SETTINGS: Record<string, string> = {
  MAX_UPLOAD_BYTES: String(10 * 1024 * 1024),
  REKOGNITION_MAX_ATTEMPTS: '3',
  // Small enough that a seeded batch of a few dozen images is stored in S3 and answered with a redirect.
  EXPORT_INLINE_MAX_BYTES: '4096',
  // Tests of other behaviours share the demo client across workers: not throttled by the default 50 requests/s. The
  // rate limit's and quota's own tests make clients with limits of their own, read afresh (no cache) each time.
  CLIENT_DEFAULT_RATE: '1000',
  CLIENT_LIMITS_CACHE_MS: '0',
  // Tests' callback receivers listen on ports the system hands out; the stack takes its own ports out of the list.
  CALLBACK_LOOPBACK_PORTS: '1024-65535',
};

export default async function globalSetup(): Promise<void> {
  for (const [name, value] of Object.entries(TEST_SETTINGS)) process.env[name] ??= value;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'icecat-test-'));
  globalThis.__ICECAT_STACK__ = await startStack({
    dataDir,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
    quiet: true,
    // Tests leave uploads behind on purpose (dead letters, refusals); a sweep would deliver them again under other
    // tests' feet. The sweep has tests of its own, on stacks of their own.
    reconcile: false,
    // Tests age batches on purpose and look at them before they are erased; the expiry sweep's own tests run it.
    expiry: false,
  });
}
