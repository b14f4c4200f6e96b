// Helpers for integration tests against the local stack the jest global setup started (or one a test starts).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { type AwsClients, createClients } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import type { DeadLetter } from '../../local/queue/dead-letter-list';
import type { QueueStats as BridgeStats } from '../../local/queue/options';
import { startStack } from '../../local/stack/stack';
import type { Stack, StackOptions } from '../../local/stack/types';

export class StackEnvError extends Error {
  override name = 'StackEnvError';
}

/** A variable of the stack's environment; fails naming it when the global setup did not run. */
export function stackEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new StackEnvError(`${name} is not set: run integration tests through jest (test/global-setup.ts)`);
  return value;
}

let clients: AwsClients | undefined;
/** SDK clients pointed at the stack by its environment, as the handlers build theirs. */
export const aws = (): AwsClients => (clients ??= createClients(loadAwsClientSettings()));

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  what?: string;
}

/** Polls `probe` until it returns a value other than undefined/false, and returns that value. */
export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, opts: WaitOptions = {}): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 100, what = 'a condition' } = opts;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Puts an object into the stack's bucket (BUCKET_NAME) under the exact key given. */
export async function uploadFile(key: string, body: Buffer | string, contentType?: string): Promise<void> {
  await aws().s3.send(new PutObjectCommand({ Bucket: stackEnv('BUCKET_NAME'), Key: key, Body: body, ContentType: contentType }));
}

async function bridgeGet<T>(pathAndQuery: string, bridgeUrl?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${bridgeUrl ?? stackEnv('ICECAT_BRIDGE_URL')}${pathAndQuery}`);
  return { status: res.status, body: (await res.json()) as T };
}

/**
 * Waits until the bridge has nothing queued, waiting for a retry or in flight: every upload made before the
 * call has been handled (or dead-lettered). Works from any process through the bridge's status endpoint.
 */
export async function waitForBridgeIdle(opts: { timeoutMs?: number; bridgeUrl?: string } = {}): Promise<BridgeStats> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const { status, body } = await bridgeGet<BridgeStats>(`/idle?timeoutMs=${timeoutMs}`, opts.bridgeUrl);
  if (status !== 200) throw new Error(`bridge not idle after ${timeoutMs} ms: ${JSON.stringify(body)}`);
  return body;
}

/** DetectLabels calls the stack's local detector has answered so far (its /__stats). */
export async function detectCalls(): Promise<number> {
  const res = await fetch(`${stackEnv('AWS_ENDPOINT_URL_REKOGNITION')}/__stats`);
  return ((await res.json()) as { detectLabels: number }).detectLabels;
}

export async function bridgeStats(bridgeUrl?: string): Promise<BridgeStats> {
  return (await bridgeGet<BridgeStats>('/status', bridgeUrl)).body;
}

export async function deadLetters(bridgeUrl?: string): Promise<DeadLetter[]> {
  return (await bridgeGet<{ items: DeadLetter[] }>('/dead-letters', bridgeUrl)).body.items;
}

/** A fresh temporary data dir. */
export const tempDataDir = (prefix = 'icecat-stack-'): string => mkdtempSync(path.join(tmpdir(), prefix));

/**
 * A second, private stack for a test that needs its own handlers or restarts: free ports, its own data dir,
 * no detector unless asked, and process.env left alone (the global stack's environment stays in force).
 */
export function startTestStack(opts: StackOptions = {}): Promise<Stack> {
  return startStack({
    dataDir: opts.dataDir ?? tempDataDir(),
    detector: false,
    apiHandler: false,
    quiet: true,
    applyEnv: false,
    ...opts,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0, ...opts.ports },
  });
}

/** A unique, key-safe id for a test's batch. */
let sequence = 0;
export const uniqueId = (prefix = 't'): string =>
  `${prefix}-${Date.now().toString(36)}-${(sequence++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
