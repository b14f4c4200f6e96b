// `icecat upload`: walk → check → declare (create the batch with the first chunk of files, then POST …/uploads for
// each next chunk) → post each file through its form with bounded concurrency and retries → close with the count
// that arrived. Memory holds two chunks of forms and the names sent, never the files' bytes.
//
// The next chunk is declared before any file of the current one is sent: the API closes a batch by itself once as
// many files arrived as were declared, so `expected` must stay ahead of the uploads until the last chunk.
import { ulid } from 'ulid';
import { hasForbiddenFileNameCharacters, hasInvalidPathSegment } from '../ids';
import { AmbiguousFailure, ApiClient, collect } from './api-client';
import { ApiAnswerError, NetworkError, OutOfSpaceError } from './errors';
import { UploadRefusedError, postForm } from './form-upload';
import { imageTypeOf } from './media-type';
import { TaskPool } from './pool';
import { DEFAULT_RETRY, TransientError, backoffMs, withRetry, type RetryPolicy } from './retry';
import type { BatchSummary, DeclaredFile, MoreUploads, UploadForm } from '../api/client-contract';
import { FormBook } from '../api/form-book';
import { LOST_REASONS, walkFiles, type SkippedEntry, type WalkedFile } from './walker';

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

export interface UploadEvents {
  uploaded?(file: CandidateFile): void;
  failed?(problem: FileProblem): void;
  skipped?(entry: SkippedEntry): void;
  retrying?(message: string, waitMs: number): void;
  batchCreated?(batchId: string): void;
}

export interface UploadOptions {
  client: ApiClient;
  inputs: readonly string[];
  batchId?: string;
  debug?: boolean;
  concurrency: number;
  /** Files declared per request (the API takes at most its MAX_FILES_PER_BATCH, 500 by default, per request). */
  chunkSize?: number;
  retry?: RetryPolicy;
  includeHidden?: boolean;
  events?: UploadEvents;
  /** Consecutive files whose upload outlasts its retries before the run gives up on the network. */
  maxConsecutiveNetworkFailures?: number;
  /** Clock (tests). */
  now?: () => number;
}

export interface UploadResult {
  batchId?: string;
  /** The summary as created (or found, when an existing batch was resumed). */
  created?: BatchSummary;
  /** Names now in the batch from this run or an earlier one (resume). */
  sent: Set<string>;
  /** Sent by this run. */
  uploadedFiles: number;
  uploadedBytes: number;
  /** Already in the batch (a resumed upload), not sent again. */
  alreadyThere: number;
  /** The batch existed (--batch NAME of an open batch): `created` is its summary when this run began. */
  resumed: boolean;
  /** Files refused for good: local checks, the API (413) or S3 (policy). */
  rejected: FileProblem[];
  /** Files not sent because the network failed (a rerun with --batch sends them). */
  unsent: FileProblem[];
  /** Why the run stopped early, if it did. */
  abortedBy?: string;
  /** The service said it is out of storage space (the run stopped there): what it said. */
  outOfSpace?: string;
}

const DEFAULT_CHUNK_SIZE = 100;

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
  const detail = entry.reason === 'broken-link' && entry.detail === 'ELOOP' ? ' (it points at itself)' : entry.detail && entry.reason !== 'invalid-name' ? ` (${entry.detail})` : '';
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

/** S3's refusal of a form whose policy has expired (AccessDenied, "Invalid according to Policy: Policy expired."). */
export const isExpiredForm = (err: unknown): boolean => err instanceof UploadRefusedError && err.status === 403 && /policy expired/i.test(err.message);

const TOO_LARGE_INDEX = /files\[(\d+)\]\.size/;
const MAX_BYTES = /the (\d+) bytes accepted/;

export async function uploadFolder(opts: UploadOptions): Promise<UploadResult> {
  const events = opts.events ?? {};
  const now = opts.now ?? Date.now;
  const policy = opts.retry ?? DEFAULT_RETRY;
  const chunkSize = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const breaker = opts.maxConsecutiveNetworkFailures ?? Math.max(4, opts.concurrency * 2);
  const result: UploadResult = { sent: new Set(), uploadedFiles: 0, uploadedBytes: 0, alreadyThere: 0, resumed: false, rejected: [], unsent: [] };
  /** Every name met so far: checks repeats, and skips what a resumed batch already holds. */
  const seen = new Set<string>();
  let alreadyInBatch = new Set<string>();
  let maxBytes = Infinity;
  let consecutiveNetworkFailures = 0;
  /** Names refused for good, so a file dropped from a declaration is not reported twice. */
  const refused = new Set<string>();
  /** The batch's `expected` after this run's last declaration (undefined: not known). */
  let expectedSoFar: number | undefined;
  const declaredOf = (files: readonly CandidateFile[]): DeclaredFile[] => files.map(({ name, contentType, size }) => ({ name, contentType, size }));
  const forms = new FormBook<CandidateFile>((files) => opts.client.renewUploads(result.batchId as string, declaredOf(files)), now, chunkSize);

  const reject = (p: FileProblem) => {
    refused.add(p.file);
    result.rejected.push(p);
    events.failed?.(p);
  };
  const unsend = (p: FileProblem) => {
    result.unsent.push(p);
    // Once the service is out of space, one line at the end names them all.
    if (!result.outOfSpace) events.failed?.(p);
  };
  const abort = (why: string) => {
    result.abortedBy ??= why;
  };
  const outOfSpace = (err: OutOfSpaceError) => {
    result.outOfSpace ??= err.message;
    abort('the service is out of disk space');
  };

  const walk = walkFiles(opts.inputs, {
    includeHidden: opts.includeHidden,
    onSkip: (e) => {
      const lost = skipProblem(e);
      if (lost) reject(lost);
      else events.skipped?.(e);
    },
  });
  let exhausted = false;
  /** The next files to declare; empty only once the walk is over. After an abort, the rest is listed as unsent. */
  async function nextChunk(): Promise<CandidateFile[]> {
    const chunk: CandidateFile[] = [];
    while (chunk.length < chunkSize && !exhausted) {
      const next = await walk.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const verdict = await checkFile(next.value, seen);
      seen.add(next.value.name);
      if (isProblem(verdict)) reject(verdict);
      else if (alreadyInBatch.has(verdict.name)) {
        result.alreadyThere++;
        result.sent.add(verdict.name);
      } else if (verdict.size > maxBytes) reject(tooLarge(verdict));
      else if (result.abortedBy) unsend(notSent(verdict));
      else chunk.push(verdict);
    }
    return chunk;
  }
  const tooLarge = (f: CandidateFile, message = `larger than the ${maxBytes} bytes the API accepts per file`): FileProblem => ({
    file: f.name,
    path: f.path,
    code: 'FileTooLarge',
    message,
  });
  const notSent = (f: CandidateFile): FileProblem => ({ file: f.name, path: f.path, code: 'NotSent', message: `not sent: ${result.abortedBy}` });

  /** Declares files (creating the batch on first use), dropping the ones the API finds too large; their forms go to the book. */
  async function declare(files: CandidateFile[]): Promise<void> {
    let remaining = files;
    for (;;) {
      const declared = declaredOf(remaining);
      const askedAtMs = now();
      try {
        let answer: { uploads: UploadForm[]; expiresAt?: string } = { uploads: [] };
        if (result.batchId === undefined) answer = await createOrResume(declared);
        else if (declared.length > 0) answer = await declareMore(result.batchId, declared);
        forms.add(remaining, answer, askedAtMs);
        return;
      } catch (err) {
        // 413 names the first file over the API's size cap and the cap: drop every file over it, declare the rest.
        const index = err instanceof ApiAnswerError && err.status === 413 ? TOO_LARGE_INDEX.exec(err.message)?.[1] : undefined;
        const named = index === undefined ? undefined : remaining[Number(index)];
        if (!named) throw err;
        const max = MAX_BYTES.exec((err as ApiAnswerError).message)?.[1];
        if (max) maxBytes = Number(max);
        const over = remaining.filter((f) => f === named || f.size > maxBytes);
        for (const f of over) reject(f === named ? tooLarge(f, (err as ApiAnswerError).message.replace(/^files\[\d+\]\.size: /, '')) : tooLarge(f));
        remaining = remaining.filter((f) => !over.includes(f));
      }
    }
  }

  /**
   * Creates the batch under a name chosen here (--batch, or a new ULID), so that creating is safe to repeat: a retry
   * whose first try made the batch answers 409 instead of making a second one that would stay open forever.
   */
  async function createOrResume(declared: DeclaredFile[]): Promise<{ uploads: UploadForm[]; expiresAt?: string }> {
    const batchId = opts.batchId ?? ulid(now());
    try {
      const created = await opts.client.createBatch({ batchId, ...(opts.debug ? { debug: true } : {}), files: declared });
      result.batchId = created.batchId;
      result.created = created.batch;
      expectedSoFar = created.batch?.expected ?? declared.length;
      events.batchCreated?.(created.batchId);
      return created;
    } catch (err) {
      if (!(err instanceof ApiAnswerError && err.status === 409)) throw err;
    }
    const existing = await opts.client.getBatch(batchId);
    // As this very declaration made it (an earlier try of this request, whose answer was lost; or an earlier run that
    // declared as many files and sent none): take it over, with fresh forms for the same files.
    if (existing.status === 'open' && existing.counts.total === 0 && existing.expected === declared.length) {
      result.batchId = batchId;
      result.created = existing;
      expectedSoFar = declared.length;
      events.batchCreated?.(batchId);
      return opts.client.renewUploads(batchId, declared);
    }
    if (!opts.batchId) throw new ApiAnswerError(`batch ${batchId} exists and is not the one this upload made`, { status: 409, code: 'batch_exists' });
    // The named batch exists: resume it, sending only the files it does not hold yet.
    result.created = existing;
    result.resumed = true;
    result.batchId = batchId;
    events.batchCreated?.(batchId);
    const images = await collect(opts.client.images(batchId));
    alreadyInBatch = new Set(images.flatMap((i) => [...(i.fileName ? [i.fileName] : []), ...(i.duplicateFiles ?? [])]));
    const fresh = declared.filter((d) => {
      if (!alreadyInBatch.has(d.name)) return true;
      result.alreadyThere++;
      result.sent.add(d.name);
      return false;
    });
    expectedSoFar = existing.expected ?? undefined;
    return fresh.length > 0 ? declareMore(batchId, fresh) : { uploads: [] };
  }

  /**
   * POST …/uploads grows `expected` each time, so it is not simply repeated: after a failure that may have taken
   * effect (a lost answer, a 5xx), the batch's `expected` tells whether it did; if so the same files' forms are
   * renewed, otherwise the declaration is sent again. This assumes no one else declares files into the batch meanwhile.
   */
  async function declareMore(batchId: string, declared: DeclaredFile[]): Promise<MoreUploads> {
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await opts.client.moreUploads(batchId, declared);
        expectedSoFar = answer.batch?.expected ?? (expectedSoFar === undefined ? undefined : expectedSoFar + declared.length);
        return answer;
      } catch (err) {
        const ambiguous = err instanceof NetworkError && err.cause instanceof AmbiguousFailure;
        if (!ambiguous || expectedSoFar === undefined || attempt >= policy.attempts) throw err;
        const batch = await opts.client.getBatch(batchId);
        if (batch.expected === expectedSoFar + declared.length) {
          expectedSoFar = batch.expected;
          return opts.client.renewUploads(batchId, declared);
        }
        if (batch.expected !== expectedSoFar) throw err;
        const waitMs = backoffMs(attempt, policy);
        events.retrying?.(`declaring ${declared.length} files: ${(err.cause as Error).message}`, waitMs);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }

  async function send(file: CandidateFile): Promise<void> {
    if (result.abortedBy) {
      forms.drop(file.name);
      unsend(notSent(file));
      return;
    }
    try {
      let renewed = false;
      await withRetry(
        async () => {
          try {
            return await postForm(await forms.take(file.name), file.path, file.contentType, file.size);
          } catch (err) {
            // Expired on the way despite the margin (a slow line, a clock ahead): once more with a fresh form.
            if (!isExpiredForm(err) || renewed) throw err;
            renewed = true;
            return postForm(await forms.take(file.name, true), file.path, file.contentType, file.size);
          }
        },
        policy,
        { onRetry: (err, _attempt, waitMs) => events.retrying?.(`${file.name}: ${err.message}`, waitMs) },
      );
      consecutiveNetworkFailures = 0;
      result.sent.add(file.name);
      result.uploadedFiles++;
      result.uploadedBytes += file.size;
      events.uploaded?.(file);
    } catch (err) {
      if (err instanceof OutOfSpaceError) {
        outOfSpace(err);
        unsend({ file: file.name, path: file.path, code: 'OutOfSpace', message: err.message });
      } else if (err instanceof UploadRefusedError) {
        reject({ file: file.name, path: file.path, code: err.code, message: err.message });
      } else if (err instanceof TransientError) {
        unsend({ file: file.name, path: file.path, code: 'NetworkError', message: err.message });
        if (++consecutiveNetworkFailures >= breaker) abort(`${consecutiveNetworkFailures} uploads in a row failed after retries (${err.message})`);
      } else if (err instanceof NetworkError) {
        // Renewing its form found no API: like a network failure of the upload itself.
        unsend({ file: file.name, path: file.path, code: 'NetworkError', message: err.message });
        if (++consecutiveNetworkFailures >= breaker) abort(err.message);
      } else {
        reject({ file: file.name, path: file.path, code: 'UploadError', message: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      forms.drop(file.name);
    }
  }

  const pool = new TaskPool(opts.concurrency);
  let chunk = await nextChunk();
  if (chunk.length === 0) return result;
  try {
    await declare(chunk);
  } catch (err) {
    // The service could not even record the batch: nothing goes, and every file is listed as not sent.
    if (!(err instanceof OutOfSpaceError)) throw err;
    outOfSpace(err);
  }
  while (chunk.length > 0) {
    const following = await nextChunk();
    if (following.length > 0 && !result.abortedBy) {
      try {
        await declare(following);
      } catch (err) {
        if (err instanceof OutOfSpaceError) outOfSpace(err);
        else if (!(err instanceof NetworkError)) throw err;
        else abort(err.message);
      }
    }
    for (const file of chunk) {
      if (forms.has(file.name)) await pool.add(() => send(file));
      else if (result.sent.has(file.name) || refused.has(file.name)) continue;
      else if (result.abortedBy) unsend(notSent(file));
      else reject({ file: file.name, path: file.path, code: 'NoUploadForm', message: 'the API handed out no upload form for this file' });
    }
    chunk = following;
  }
  await pool.drain();
  return result;
}
