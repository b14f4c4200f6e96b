// Resident memory of a process and every process under it (Linux /proc), for benches that measure a whole stack.
// Worker threads are inside their process's figure; child processes are added.
import { readdirSync, readFileSync } from 'node:fs';

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The pids of a process's children (every thread's), or none where /proc does not say. */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((tid) => (read(`/proc/${pid}/task/${tid}/children`) ?? '').split(/\s+/).filter(Boolean).map(Number));
}

/** VmRSS of one process in bytes (undefined when /proc has no figure, e.g. not Linux or the process is gone). */
export function processRssBytes(pid: number): number | undefined {
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(read(`/proc/${pid}/status`) ?? '')?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** The summed resident memory of `pid` and all its descendants; falls back to this process's rss off Linux. */
export function treeRssBytes(pid: number = process.pid): { bytes: number; processes: number } {
  const seen = new Set<number>();
  const queue = [pid];
  let bytes = 0;
  while (queue.length > 0) {
    const next = queue.shift() as number;
    if (seen.has(next)) continue;
    seen.add(next);
    const rss = processRssBytes(next);
    if (rss === undefined) continue;
    bytes += rss;
    queue.push(...childrenOf(next));
  }
  if (bytes === 0 && pid === process.pid) return { bytes: process.memoryUsage().rss, processes: 1 };
  return { bytes, processes: seen.size };
}
