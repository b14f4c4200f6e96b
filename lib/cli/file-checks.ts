// The local checks of a file before it is declared: its name, repeats, emptiness, and whether it is an image; and
// what a walk's skip means for the batch.

import type { DeclaredFile } from '../api/client-contract';
import { hasForbiddenFileNameCharacters, hasInvalidPathSegment } from '../ids';
import { imageTypeOf } from './media-type';
import { LOST_REASONS, type SkippedEntry, type WalkedFile, walkFiles } from './walker';

export interface CandidateFile extends DeclaredFile {
  path: string;
}

/** A file that is not in the batch, and why. */
export interface FileProblem {
  file: string;
  path: string;
  code: string;
  message: string;
}

// The API's file-name rules (segments, no control characters or backslashes, 255 characters) and S3's per-segment
// 255-byte cap: refused here, the whole declaration request would be refused.
export function nameProblem(name: string): string | undefined {
  if (name.length > 255) return 'the name in the batch is longer than 255 characters';
  if (hasForbiddenFileNameCharacters(name)) return 'the name contains control characters or backslashes';
  if (hasInvalidPathSegment(name)) return 'the name has an empty, "." or ".." segment';
  if (name.split('/').some((s) => Buffer.byteLength(s) > 255)) return 'a folder or file name is longer than 255 bytes';
  return undefined;
}

/** Local verdict on one walked file: a candidate to declare, or the reason it is not sent (`seen`: names so far). */
export async function checkFile(file: WalkedFile, seen: ReadonlySet<string>): Promise<CandidateFile | FileProblem> {
  const problem = (code: string, message: string): FileProblem => ({ file: file.name, path: file.path, code, message });
  const badName = nameProblem(file.name);
  if (badName) return problem('InvalidName', badName);
  if (seen.has(file.name)) return problem('DuplicateName', 'another input has the same name in the batch');
  if (file.size === 0) return problem('EmptyFile', 'the file is empty (0 bytes)');
  let contentType: string | undefined;
  try {
    contentType = await imageTypeOf(file.path);
  } catch (err) {
    return problem('Unreadable', `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!contentType) return problem('NotAnImage', 'not an image by its extension or its first bytes');
  return { name: file.name, path: file.path, size: file.size, contentType };
}

export const isProblem = (v: CandidateFile | FileProblem): v is FileProblem => 'code' in v;

const SKIP_CODES: Partial<Record<SkippedEntry['reason'], { code: string; message: string }>> = {
  unreadable: { code: 'Unreadable', message: 'skipped: cannot be read' },
  'broken-link': { code: 'BrokenLink', message: 'skipped: a symbolic link to nothing' },
  'invalid-name': { code: 'InvalidName', message: 'skipped: the name is not valid UTF-8' },
};

/** A walk's skip that may have left files out (an unreadable folder, a broken link, a name not UTF-8), as a problem. */
export function skipProblem(entry: SkippedEntry): FileProblem | undefined {
  const known = LOST_REASONS.has(entry.reason) ? SKIP_CODES[entry.reason] : undefined;
  if (!known) return undefined;
  const detail =
    entry.reason === 'broken-link' && entry.detail === 'ELOOP'
      ? ' (it points at itself)'
      : entry.detail && entry.reason !== 'invalid-name'
        ? ` (${entry.detail})`
        : '';
  return { file: entry.name, path: entry.path, code: known.code, message: `${known.message}${detail}` };
}

/** Counts the non-empty images a walk offers, holding nothing (the progress totals). */
export async function countFiles(inputs: readonly string[], includeHidden = false): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const f of walkFiles(inputs, { includeHidden })) {
    if (f.size === 0 || !(await imageTypeOf(f.path).catch(() => undefined))) continue;
    files++;
    bytes += f.size;
  }
  return { files, bytes };
}
