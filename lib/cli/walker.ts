// The files an upload takes, streamed: folders are walked depth-first with one directory listing open at a time, so
// 10,000 files cost no more memory than ten. Symbolic links are followed; a link back into a folder already walked
// (a loop, or the same folder reached twice) is skipped, as are sockets, FIFOs and devices.
import { opendir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Stats } from 'node:fs';

export interface WalkedFile {
  /** Where it is on disk. */
  path: string;
  /** Its name in the batch: the walked folder's name (none when given with a trailing slash), then the path below it. */
  name: string;
  size: number;
}

export interface SkippedEntry {
  path: string;
  reason: 'not-a-file' | 'symlink-loop' | 'hidden' | 'unreadable';
  detail?: string;
}

export interface WalkOptions {
  /** Walk dot-files and dot-folders too (default false: .git, .DS_Store and the like stay home). */
  includeHidden?: boolean;
  onSkip?: (entry: SkippedEntry) => void;
}

/** Usage problems with the inputs themselves (a path that does not exist). */
export class WalkInputError extends Error {
  override name = 'WalkInputError';
}

const toPosix = (p: string): string => p.split(path.sep).join('/');

/**
 * Every regular file under the inputs, in a stable order (names sorted within each folder). A file given by name is
 * uploaded under its base name; a folder under its own name, so `upload ./trip` names `trip/day1/a.jpg`, and as rsync
 * and `cp -r` read it, a folder given with a trailing slash stands for its contents: `upload ./trip/` names `day1/a.jpg`.
 */
export async function* walkFiles(inputs: readonly string[], options: WalkOptions = {}): AsyncGenerator<WalkedFile> {
  const visited = new Set<string>();
  for (const input of inputs) {
    const info = await statInput(input);
    const absolute = path.resolve(input);
    if (info.isFile()) {
      yield { path: absolute, name: path.basename(absolute), size: info.size };
    } else if (info.isDirectory()) {
      const contentsOnly = input.endsWith('/') || input.endsWith(path.sep);
      yield* walkFolder(absolute, contentsOnly ? '' : path.basename(absolute) || 'root', info, visited, options);
    } else {
      options.onSkip?.({ path: input, reason: 'not-a-file' });
    }
  }
}

/** Fails with a WalkInputError on the first input that cannot be read, before anything else happens. */
export async function checkInputs(inputs: readonly string[]): Promise<void> {
  for (const input of inputs) await statInput(input);
}

async function statInput(input: string): Promise<Stats> {
  try {
    return await stat(input);
  } catch (err) {
    throw new WalkInputError(`cannot read ${input}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
}

const folderKey = (info: Stats): string => `${info.dev}:${info.ino}`;

async function* walkFolder(dir: string, name: string, info: Stats, visited: Set<string>, options: WalkOptions): AsyncGenerator<WalkedFile> {
  const key = folderKey(info);
  if (visited.has(key)) {
    options.onSkip?.({ path: dir, reason: 'symlink-loop' });
    return;
  }
  visited.add(key);
  let entries: string[];
  try {
    // Names only (a few bytes each) so the listing closes before the walk goes deeper.
    entries = [];
    for await (const entry of await opendir(dir)) entries.push(entry.name);
  } catch (err) {
    options.onSkip?.({ path: dir, reason: 'unreadable', detail: (err as NodeJS.ErrnoException).code });
    return;
  }
  entries.sort();
  for (const entryName of entries) {
    const full = path.join(dir, entryName);
    if (!options.includeHidden && entryName.startsWith('.')) {
      options.onSkip?.({ path: full, reason: 'hidden' });
      continue;
    }
    let entryInfo: Stats;
    try {
      entryInfo = await stat(full);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ELOOP: a link that points at itself; ENOENT: a dangling link.
      options.onSkip?.({ path: full, reason: code === 'ELOOP' ? 'symlink-loop' : 'unreadable', detail: code });
      continue;
    }
    const entryNameInBatch = name ? `${name}/${toPosix(entryName)}` : toPosix(entryName);
    if (entryInfo.isDirectory()) yield* walkFolder(full, entryNameInBatch, entryInfo, visited, options);
    else if (entryInfo.isFile()) yield { path: full, name: entryNameInBatch, size: entryInfo.size };
    else options.onSkip?.({ path: full, reason: 'not-a-file' });
  }
}
