// The files an upload takes, streamed: folders are walked depth-first with one directory listing open at a time, so
// 10,000 files cost no more memory than ten. Symbolic links are followed; a link back into a folder already walked
// (a loop, or the same folder reached twice) is skipped, as are sockets, FIFOs and devices.

import type { Stats } from 'node:fs';
import { opendir, stat } from 'node:fs/promises';
import path from 'node:path';
import { IceCatError } from '../errors';

export interface WalkedFile {
  /** Where it is on disk. */
  path: string;
  /** Its name in the batch: the walked folder's name (none when given with a trailing slash), then the path below it. */
  name: string;
  size: number;
}

export interface SkippedEntry {
  path: string;
  /** The name it would have had in the batch (a folder's: the folder's). */
  name: string;
  /**
   * `unreadable` (a folder or file that cannot be read), `broken-link` (a link to nothing or to itself) and
   * `invalid-name` (not valid UTF-8, so it cannot be named in the batch) leave files out: see LOST_REASONS.
   */
  reason: 'not-a-file' | 'symlink-loop' | 'hidden' | 'unreadable' | 'broken-link' | 'invalid-name';
  detail?: string;
}

/** Skips that may leave a file the user meant to upload out of the batch; the others are by design. */
export const LOST_REASONS: ReadonlySet<SkippedEntry['reason']> = new Set(['unreadable', 'broken-link', 'invalid-name']);

interface WalkOptions {
  /** Walk dot-files and dot-folders too (default false: .git, .DS_Store and the like stay home). */
  includeHidden?: boolean;
  onSkip?: (entry: SkippedEntry) => void;
}

/** Usage problems with the inputs themselves (a path that does not exist). */
export class WalkInputError extends IceCatError {
  override name = 'WalkInputError';
  readonly code: string = 'invalid_input';
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
      options.onSkip?.({ path: input, name: path.basename(absolute), reason: 'not-a-file' });
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A file name as the bytes on disk: the text, or undefined when they are not valid UTF-8. */
function decodeName(raw: Buffer): string | undefined {
  try {
    return utf8.decode(raw);
  } catch {
    return undefined;
  }
}

/** Bytes that are not valid UTF-8 shown as \xNN, the valid parts as text (pure): "caf\xE9.jpg". */
function escapeInvalidUtf8(raw: Buffer): string {
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const lead = raw[i] as number;
    const length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
    const text = length > 0 && i + length <= raw.length ? decodeName(raw.subarray(i, i + length)) : undefined;
    if (text === undefined) {
      out += `\\x${lead.toString(16).toUpperCase().padStart(2, '0')}`;
      i += 1;
    } else {
      out += text;
      i += length;
    }
  }
  return out;
}

async function* walkFolder(dir: string, name: string, info: Stats, visited: Set<string>, options: WalkOptions): AsyncGenerator<WalkedFile> {
  const key = folderKey(info);
  if (visited.has(key)) {
    options.onSkip?.({ path: dir, name, reason: 'symlink-loop' });
    return;
  }
  visited.add(key);
  let entries: { name: string; valid: boolean }[];
  try {
    // Names only (a few bytes each) so the listing closes before the walk goes deeper. Read as bytes: a name that
    // is not UTF-8 would otherwise be decoded with U+FFFD in place of its bytes, a path that does not exist.
    entries = [];
    for await (const entry of await opendir(dir, { encoding: 'buffer' as BufferEncoding })) {
      const raw = entry.name as unknown as Buffer;
      const text = decodeName(raw);
      entries.push(text === undefined ? { name: escapeInvalidUtf8(raw), valid: false } : { name: text, valid: true });
    }
  } catch (err) {
    options.onSkip?.({ path: dir, name, reason: 'unreadable', detail: (err as NodeJS.ErrnoException).code });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { name: entryName, valid } of entries) {
    const full = path.join(dir, entryName);
    const entryNameInBatch = name ? `${name}/${toPosix(entryName)}` : toPosix(entryName);
    if (!options.includeHidden && entryName.startsWith('.')) {
      options.onSkip?.({ path: full, name: entryNameInBatch, reason: 'hidden' });
      continue;
    }
    if (!valid) {
      options.onSkip?.({ path: full, name: entryNameInBatch, reason: 'invalid-name', detail: 'not valid UTF-8' });
      continue;
    }
    let entryInfo: Stats;
    try {
      entryInfo = await stat(full);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ELOOP: a link that points at itself; ENOENT: a dangling link (lstat worked, or the listing would not name it).
      const broken = code === 'ELOOP' || code === 'ENOENT';
      options.onSkip?.({ path: full, name: entryNameInBatch, reason: broken ? 'broken-link' : 'unreadable', detail: code });
      continue;
    }
    if (entryInfo.isDirectory()) yield* walkFolder(full, entryNameInBatch, entryInfo, visited, options);
    else if (entryInfo.isFile()) yield { path: full, name: entryNameInBatch, size: entryInfo.size };
    else options.onSkip?.({ path: full, name: entryNameInBatch, reason: 'not-a-file' });
  }
}
