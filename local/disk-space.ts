// A full data dir is a fault of the local stack, not a crash (docs/design.md, "A full disk"): each stand-in refuses the
// write it cannot make with its service's error and reports it here, so that the stack's log and its status page say
// why; the state clears by itself once the filesystem has room again.
import { statfsSync } from 'node:fs';

const MIB = 1024 * 1024;

/** Whether an error is the filesystem saying it has no room (a write, a sync, a rename, LevelDB's IO error). */
export function isOutOfSpace(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  return typeof message === 'string' && /ENOSPC|EDQUOT|no space left on device|disk quota exceeded/i.test(message);
}

export interface FreeSpace {
  freeBytes: number;
  totalBytes: number;
}

/** Room left to an unprivileged writer on the filesystem holding `dir`; undefined when the OS cannot tell. */
export function freeSpace(dir: string): FreeSpace | undefined {
  try {
    const s = statfsSync(dir);
    return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
  } catch {
    return undefined;
  }
}

const mib = (bytes: number): string => `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;

/** The warning for a data dir whose filesystem has little room left, or undefined. */
export function lowSpaceWarning(dataDir: string, thresholdBytes: number): string | undefined {
  const space = freeSpace(dataDir);
  if (!space || space.freeBytes >= thresholdBytes) return undefined;
  return (
    `[stack] warning: only ${mib(space.freeBytes)} free of ${mib(space.totalBytes)} for ${dataDir}: uploads are refused ` +
    '(S3 InternalError, DynamoDB InternalServerError) while it is full, and handled once space is freed'
  );
}

export interface DiskFault {
  /** The stand-in that refused a write: s3, dynamodb, queue. */
  service: string;
  /** When it first, and last, refused one in this episode (ISO). */
  since: string;
  last: string;
  count: number;
  message: string;
}

export interface DiskState {
  dataDir: string;
  freeBytes?: number;
  totalBytes?: number;
  /** Free space is under the low-space threshold. */
  low: boolean;
  /** A write was refused for lack of space, and the filesystem has not gained room since. */
  full: boolean;
  faults: DiskFault[];
}

/** Space the filesystem must gain after a refusal before the episode counts as over. */
const RECOVERED_MARGIN_BYTES = 4 * MIB;
/** With some room regained, an episode is over after this long without a refused write. */
const QUIET_MS = 60_000;
/** One log line per service per this long while the disk stays full. */
const LOG_EVERY_MS = 10_000;

/** The out-of-space episodes of one data dir, as the stand-ins report them. */
export class DiskFaults {
  private readonly faults = new Map<string, DiskFault & { loggedAt: number }>();
  /** Free bytes when the last refusal happened. */
  private freeAtFault: number | undefined;

  constructor(
    readonly dataDir: string,
    private readonly log: (line: string) => void,
    private readonly lowSpaceBytes: number,
  ) {}

  /** Records that `service` refused a write for lack of space (`err` says how); logs it, a line per service per 10 s. */
  report(service: string, err: unknown): void {
    const now = Date.now();
    const message = err instanceof Error ? err.message : String(err);
    this.freeAtFault = freeSpace(this.dataDir)?.freeBytes ?? 0;
    const fault = this.faults.get(service);
    if (fault) {
      fault.count += 1;
      fault.last = new Date(now).toISOString();
      fault.message = message;
      if (now - fault.loggedAt < LOG_EVERY_MS) return;
      fault.loggedAt = now;
      this.log(`[${service}] still out of space (${fault.count} writes refused since ${fault.since}): ${message}`);
      return;
    }
    const at = new Date(now).toISOString();
    this.faults.set(service, { service, since: at, last: at, count: 1, message, loggedAt: now });
    this.log(
      `[${service}] out of space in ${this.dataDir}: writes are refused (${message}); ` +
        'free some space: what was accepted is handled once there is room',
    );
  }

  /** The state now; an episode ends (and is logged as over) once the filesystem has gained room since its last refusal. */
  state(): DiskState {
    const space = freeSpace(this.dataDir);
    const lastFault = Math.max(0, ...[...this.faults.values()].map((f) => Date.parse(f.last)));
    const gained = space && this.freeAtFault !== undefined ? space.freeBytes - this.freeAtFault : 0;
    // Over once the filesystem gained a few MiB, or gained some and no write was refused for a minute.
    if (this.faults.size > 0 && (gained >= RECOVERED_MARGIN_BYTES || (gained > 0 && Date.now() - lastFault > QUIET_MS))) {
      this.log(`[stack] ${this.dataDir} has room again (${space ? mib(space.freeBytes) : 'some space'} free): writes are accepted`);
      this.faults.clear();
      this.freeAtFault = undefined;
    }
    return {
      dataDir: this.dataDir,
      ...(space ? { freeBytes: space.freeBytes, totalBytes: space.totalBytes } : {}),
      low: space !== undefined && space.freeBytes < this.lowSpaceBytes,
      full: this.faults.size > 0,
      faults: [...this.faults.values()].map(({ loggedAt: _loggedAt, ...fault }) => fault),
    };
  }
}
