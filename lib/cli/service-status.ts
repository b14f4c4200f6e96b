// Why a batch does not move, where the service knows: the local stack's bridge answers GET /status with its disk
// (out of space), whether its queue is paused, and how many uploads sit in its dead-letter list. `icecat upload
// --wait` reads it when nothing has moved for a while and says why in one line. The API itself has no such route (on
// AWS those are the operator's CloudWatch alarms), so the CLI asks the bridge: --status-url, ICECAT_BRIDGE_URL (which
// the local stack exports; CliConfig.bridgeUrl), or for an API on a loopback address the bridge's default port on the same host.

/** The local stack's bridge's default port (local/contract.ts DEFAULT_PORTS.bridge). */
export const LOCAL_BRIDGE_PORT = 4570;

/** What the CLI reads of the bridge's GET /status. */
export interface ServiceStatus {
  paused?: boolean;
  deadLetters?: number;
  disk?: {
    dataDir?: string;
    freeBytes?: number;
    full?: boolean;
    faults?: { service: string; since: string; count: number; message?: string }[];
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The status URL to ask, or undefined when there is none to guess (an API elsewhere, no --status-url). */
export function statusUrlFor(apiUrl: string, flag: string | undefined, bridgeUrl: string | undefined): string | undefined {
  const base = flag ?? (bridgeUrl || undefined);
  if (base) return `${base.replace(/\/+$/, '').replace(/\/status$/, '')}/status`;
  const api = new URL(apiUrl);
  return LOOPBACK.has(api.hostname) ? `http://${api.hostname}:${LOCAL_BRIDGE_PORT}/status` : undefined;
}

/** The status, or undefined when it cannot be read (no bridge there, a timeout, not JSON). */
export async function readServiceStatus(url: string, timeoutMs = 3_000): Promise<ServiceStatus | undefined> {
  try {
    const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    return (await res.json()) as ServiceStatus;
  } catch {
    return undefined;
  }
}

/** Why nothing moves, in a few words, or undefined when the status names no cause. */
export function stallCause(status: ServiceStatus | undefined): string | undefined {
  if (!status) return undefined;
  const causes: string[] = [];
  if (status.disk?.full) {
    const refused = (status.disk.faults ?? []).map((f) => `${f.service} ${f.count}`).join(', ');
    causes.push(
      `the service is out of disk space${status.disk.dataDir ? ` in ${status.disk.dataDir}` : ''}` +
        `${refused ? ` (writes refused: ${refused})` : ''}; the uploads are kept and handled once space is freed`,
    );
  }
  if (status.paused) causes.push("the service's queue is paused (POST /resume on its bridge delivers again)");
  if ((status.deadLetters ?? 0) > 0) {
    const n = status.deadLetters as number;
    causes.push(`${n} ${n === 1 ? 'upload is' : 'uploads are'} in the service's dead-letter list (npm run dead-letters shows them)`);
  }
  return causes.length ? causes.join('; ') : undefined;
}
