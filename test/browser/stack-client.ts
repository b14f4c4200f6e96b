// What the browser tests need of the stack the jest global setup started, reached over HTTP and the SDK only: these
// files compile with the DOM library (their page callbacks run in the browser), so they import nothing that starts
// servers (local/*), whose Node-typed request bodies the DOM's fetch types refuse.
import { registerApiKey } from '../../lib/auth/register';
import { createDocumentClient } from '../../lib/aws/clients';
import { Registrations } from '../../lib/store/client/registrations';

export function stackEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the browser tests through jest (test/global-setup.ts)`);
  return value;
}

let sequence = 0;
export const uniqueId = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${(sequence++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** Until the bridge has handled every upload made so far (test/helpers' waitForBridgeIdle, over HTTP). */
export async function waitForBridgeIdle(timeoutMs = 60_000): Promise<void> {
  const res = await fetch(`${stackEnv('ICECAT_BRIDGE_URL')}/idle?timeoutMs=${timeoutMs}`);
  const body = await res.text();
  if (res.status !== 200) throw new Error(`bridge not idle after ${timeoutMs} ms: ${body}`);
}

/** DetectLabels calls the stack's local detector has answered so far (its /__stats). */
export async function detectCalls(): Promise<number> {
  const res = await fetch(`${stackEnv('AWS_ENDPOINT_URL_REKOGNITION')}/__stats`);
  return ((await res.json()) as { detectLabels: number }).detectLabels;
}

export interface TestClient {
  clientId: string;
  key: string;
}

export async function newClient(prefix: string): Promise<TestClient> {
  const clientId = uniqueId(prefix);
  const ddb = createDocumentClient();
  try {
    return { clientId, key: await registerApiKey(new Registrations({ ddb, tableName: stackEnv('TABLE_NAME') }), clientId) };
  } finally {
    ddb.destroy();
  }
}

/** One API call with a key; the JSON answer. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call<T = any>(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(new URL(path, stackEnv('ICECAT_API_URL')), {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Every page of a list route. */
export async function readAll<T>(path: string, key: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const res = await call<{ items: T[]; cursor?: string }>('GET', `${path}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, key);
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    items.push(...res.body.items);
    cursor = res.body.cursor;
  } while (cursor);
  return items;
}
