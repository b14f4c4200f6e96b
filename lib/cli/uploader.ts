// `icecat upload`: walk → check → declare (create the batch with the first chunk of files, then POST …/uploads for
// each next chunk) → post each file through its form with bounded concurrency and retries → close with the count
// that arrived. Memory holds two chunks of forms and the names sent, never the files' bytes.
//
// The next chunk is declared before any file of the current one is sent: the API closes a batch by itself once as
// many files arrived as were declared, so `expected` must stay ahead of the uploads until the last chunk.
import { ulid } from 'ulid';
import type { BatchSummary, DeclaredFile, MoreUploads, UploadForm } from '../api/client-contract';
import { FormBook } from '../api/form-book';
import { AmbiguousFailureError, ApiClient, collect } from './api-client';
import { ApiAnswerError, NetworkError, OutOfSpaceError } from './errors';
import { type CandidateFile, checkFile, type FileProblem, isProblem, skipProblem } from './file-checks';
import { postForm, UploadRefusedError } from './form-upload';
import { TaskPool } from './pool';
import { backoffMs, DEFAULT_RETRY_POLICY, type RetryPolicy, TransientError, withRetry } from './retry';
import { type SkippedEntry, type WalkedFile, walkFiles } from './walker';

interface UploadEvents {
  uploaded?(file: CandidateFile): void;
  failed?(problem: FileProblem): void;
  skipped?(entry: SkippedEntry): void;
  retrying?(message: string, waitMs: number): void;
  batchCreated?(batchId: string): void;
}

interface UploadOptions {
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

/** S3's refusal of a form whose policy has expired (AccessDenied, "Invalid according to Policy: Policy expired."). */
const isExpiredForm = (err: unknown): boolean =>
  err instanceof UploadRefusedError && err.status === 403 && /policy expired/i.test(err.message);

const TOO_LARGE_INDEX = /files\[(\d+)\]\.size/;
const MAX_BYTES = /the (\d+) bytes accepted/;

export function uploadFolder(opts: UploadOptions): Promise<UploadResult> {
  return new FolderUpload(opts).run();
}

const declaredOf = (files: readonly CandidateFile[]): DeclaredFile[] =>
  files.map(({ name, contentType, size }) => ({ name, contentType, size }));

/** One run of uploadFolder: the walk, the batch's declarations, the forms and the sends, and what they came to. */
class FolderUpload {
  private readonly events: UploadEvents;
  private readonly now: () => number;
  private readonly policy: RetryPolicy;
  private readonly chunkSize: number;
  private readonly breaker: number;
  readonly result: UploadResult = {
    sent: new Set(),
    uploadedFiles: 0,
    uploadedBytes: 0,
    alreadyThere: 0,
    resumed: false,
    rejected: [],
    unsent: [],
  };
  /** Every name met so far: checks repeats, and skips what a resumed batch already holds. */
  private readonly seen = new Set<string>();
  private alreadyInBatch = new Set<string>();
  private maxBytes = Infinity;
  private consecutiveNetworkFailures = 0;
  /** Names refused for good, so a file dropped from a declaration is not reported twice. */
  private readonly refused = new Set<string>();
  /** The batch's `expected` after this run's last declaration (undefined: not known). */
  private expectedSoFar: number | undefined;
  private readonly forms: FormBook<CandidateFile>;
  private readonly walk: AsyncGenerator<WalkedFile>;
  private exhausted = false;

  constructor(private readonly opts: UploadOptions) {
    this.events = opts.events ?? {};
    this.now = opts.now ?? Date.now;
    this.policy = opts.retry ?? DEFAULT_RETRY_POLICY;
    this.chunkSize = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
    this.breaker = opts.maxConsecutiveNetworkFailures ?? Math.max(4, opts.concurrency * 2);
    this.forms = new FormBook<CandidateFile>(
      (files) => opts.client.renewUploads(this.result.batchId as string, declaredOf(files)),
      this.now,
      this.chunkSize,
    );
    this.walk = walkFiles(opts.inputs, {
      includeHidden: opts.includeHidden,
      onSkip: (e) => {
        const lost = skipProblem(e);
        if (lost) this.reject(lost);
        else this.events.skipped?.(e);
      },
    });
  }

  async run(): Promise<UploadResult> {
    const { result, forms } = this;
    const pool = new TaskPool(this.opts.concurrency);
    let chunk = await this.nextChunk();
    if (chunk.length === 0) return result;
    try {
      await this.declare(chunk);
    } catch (err) {
      // The service could not even record the batch: nothing goes, and every file is listed as not sent.
      if (!(err instanceof OutOfSpaceError)) throw err;
      this.outOfSpace(err);
    }
    while (chunk.length > 0) {
      const following = await this.nextChunk();
      if (following.length > 0 && !result.abortedBy) {
        try {
          await this.declare(following);
        } catch (err) {
          if (err instanceof OutOfSpaceError) this.outOfSpace(err);
          else if (!(err instanceof NetworkError)) throw err;
          else this.abort(err.message);
        }
      }
      for (const file of chunk) {
        if (forms.has(file.name)) await pool.add(() => this.send(file));
        else if (result.sent.has(file.name) || this.refused.has(file.name)) continue;
        else if (result.abortedBy) this.unsend(this.notSent(file));
        else
          this.reject({
            file: file.name,
            path: file.path,
            code: 'NoUploadForm',
            message: 'the API handed out no upload form for this file',
          });
      }
      chunk = following;
    }
    await pool.drain();
    return result;
  }

  private reject(p: FileProblem): void {
    this.refused.add(p.file);
    this.result.rejected.push(p);
    this.events.failed?.(p);
  }

  private unsend(p: FileProblem): void {
    this.result.unsent.push(p);
    // Once the service is out of space, one line at the end names them all.
    if (!this.result.outOfSpace) this.events.failed?.(p);
  }

  private abort(why: string): void {
    this.result.abortedBy ??= why;
  }

  private outOfSpace(err: OutOfSpaceError): void {
    this.result.outOfSpace ??= err.message;
    this.abort('the service is out of disk space');
  }

  private tooLarge(f: CandidateFile, message = `larger than the ${this.maxBytes} bytes the API accepts per file`): FileProblem {
    return { file: f.name, path: f.path, code: 'FileTooLarge', message };
  }

  private notSent(f: CandidateFile): FileProblem {
    return { file: f.name, path: f.path, code: 'NotSent', message: `not sent: ${this.result.abortedBy}` };
  }

  /** The next files to declare; empty only once the walk is over. After an abort, the rest is listed as unsent. */
  private async nextChunk(): Promise<CandidateFile[]> {
    const { result } = this;
    const chunk: CandidateFile[] = [];
    while (chunk.length < this.chunkSize && !this.exhausted) {
      const next = await this.walk.next();
      if (next.done) {
        this.exhausted = true;
        break;
      }
      const verdict = await checkFile(next.value, this.seen);
      this.seen.add(next.value.name);
      if (isProblem(verdict)) this.reject(verdict);
      else if (this.alreadyInBatch.has(verdict.name)) {
        result.alreadyThere++;
        result.sent.add(verdict.name);
      } else if (verdict.size > this.maxBytes) this.reject(this.tooLarge(verdict));
      else if (result.abortedBy) this.unsend(this.notSent(verdict));
      else chunk.push(verdict);
    }
    return chunk;
  }

  /** Declares files (creating the batch on first use), dropping the ones the API finds too large; their forms go to the book. */
  private async declare(files: CandidateFile[]): Promise<void> {
    let remaining = files;
    for (;;) {
      const declared = declaredOf(remaining);
      const askedAtMs = this.now();
      try {
        let answer: { uploads: UploadForm[]; expiresAt?: string } = { uploads: [] };
        if (this.result.batchId === undefined) answer = await this.createOrResume(declared);
        else if (declared.length > 0) answer = await this.declareMore(this.result.batchId, declared);
        this.forms.add(remaining, answer, askedAtMs);
        return;
      } catch (err) {
        // 413 names the first file over the API's size cap and the cap: drop every file over it, declare the rest.
        const index = err instanceof ApiAnswerError && err.status === 413 ? TOO_LARGE_INDEX.exec(err.message)?.[1] : undefined;
        const named = index === undefined ? undefined : remaining[Number(index)];
        if (!named) throw err;
        const max = MAX_BYTES.exec((err as ApiAnswerError).message)?.[1];
        if (max) this.maxBytes = Number(max);
        const over = remaining.filter((f) => f === named || f.size > this.maxBytes);
        for (const f of over)
          this.reject(
            f === named ? this.tooLarge(f, (err as ApiAnswerError).message.replace(/^files\[\d+\]\.size: /, '')) : this.tooLarge(f),
          );
        remaining = remaining.filter((f) => !over.includes(f));
      }
    }
  }

  /**
   * Creates the batch under a name chosen here (--batch, or a new ULID), so that creating is safe to repeat: a retry
   * whose first try made the batch answers 409 instead of making a second one that would stay open forever.
   */
  private async createOrResume(declared: DeclaredFile[]): Promise<{ uploads: UploadForm[]; expiresAt?: string }> {
    const { opts, result, events } = this;
    const batchId = opts.batchId ?? ulid(this.now());
    try {
      const created = await opts.client.createBatch({ batchId, ...(opts.debug ? { debug: true } : {}), files: declared });
      result.batchId = created.batchId;
      result.created = created.batch;
      this.expectedSoFar = created.batch?.expected ?? declared.length;
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
      this.expectedSoFar = declared.length;
      events.batchCreated?.(batchId);
      return opts.client.renewUploads(batchId, declared);
    }
    if (!opts.batchId)
      throw new ApiAnswerError(`batch ${batchId} exists and is not the one this upload made`, { status: 409, code: 'batch_exists' });
    return this.resume(batchId, existing, declared);
  }

  /** The named batch exists: resume it, sending only the files it does not hold yet. */
  private async resume(
    batchId: string,
    existing: BatchSummary,
    declared: DeclaredFile[],
  ): Promise<{ uploads: UploadForm[]; expiresAt?: string }> {
    const { opts, result } = this;
    result.created = existing;
    result.resumed = true;
    result.batchId = batchId;
    this.events.batchCreated?.(batchId);
    const images = await collect(opts.client.images(batchId));
    this.alreadyInBatch = new Set(images.flatMap((i) => [...(i.fileName ? [i.fileName] : []), ...(i.duplicateFiles ?? [])]));
    const fresh = declared.filter((d) => {
      if (!this.alreadyInBatch.has(d.name)) return true;
      result.alreadyThere++;
      result.sent.add(d.name);
      return false;
    });
    this.expectedSoFar = existing.expected ?? undefined;
    return fresh.length > 0 ? this.declareMore(batchId, fresh) : { uploads: [] };
  }

  /**
   * POST …/uploads grows `expected` each time, so it is not simply repeated: after a failure that may have taken
   * effect (a lost answer, a 5xx), the batch's `expected` tells whether it did; if so the same files' forms are
   * renewed, otherwise the declaration is sent again. This assumes no one else declares files into the batch meanwhile.
   */
  private async declareMore(batchId: string, declared: DeclaredFile[]): Promise<MoreUploads> {
    const { opts, policy } = this;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await opts.client.moreUploads(batchId, declared);
        this.expectedSoFar =
          answer.batch?.expected ?? (this.expectedSoFar === undefined ? undefined : this.expectedSoFar + declared.length);
        return answer;
      } catch (err) {
        const ambiguous = err instanceof NetworkError && err.cause instanceof AmbiguousFailureError;
        if (!ambiguous || this.expectedSoFar === undefined || attempt >= policy.attempts) throw err;
        const batch = await opts.client.getBatch(batchId);
        if (batch.expected === this.expectedSoFar + declared.length) {
          this.expectedSoFar = batch.expected;
          return opts.client.renewUploads(batchId, declared);
        }
        if (batch.expected !== this.expectedSoFar) throw err;
        const waitMs = backoffMs(attempt, policy);
        this.events.retrying?.(`declaring ${declared.length} files: ${(err.cause as Error).message}`, waitMs);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }

  private async send(file: CandidateFile): Promise<void> {
    const { result, forms } = this;
    if (result.abortedBy) {
      forms.drop(file.name);
      this.unsend(this.notSent(file));
      return;
    }
    try {
      await this.post(file);
      this.consecutiveNetworkFailures = 0;
      result.sent.add(file.name);
      result.uploadedFiles++;
      result.uploadedBytes += file.size;
      this.events.uploaded?.(file);
    } catch (err) {
      this.sendFailed(file, err);
    } finally {
      forms.drop(file.name);
    }
  }

  /** Posts a file through its form, with retries, and once more with a fresh form if it expired on the way. */
  private async post(file: CandidateFile): Promise<void> {
    const { forms } = this;
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
      this.policy,
      { onRetry: (err, _attempt, waitMs) => this.events.retrying?.(`${file.name}: ${err.message}`, waitMs) },
    );
  }

  private sendFailed(file: CandidateFile, err: unknown): void {
    if (err instanceof OutOfSpaceError) {
      this.outOfSpace(err);
      this.unsend({ file: file.name, path: file.path, code: 'OutOfSpace', message: err.message });
    } else if (err instanceof UploadRefusedError) {
      this.reject({ file: file.name, path: file.path, code: err.code, message: err.message });
    } else if (err instanceof TransientError) {
      this.unsend({ file: file.name, path: file.path, code: 'NetworkError', message: err.message });
      if (++this.consecutiveNetworkFailures >= this.breaker)
        this.abort(`${this.consecutiveNetworkFailures} uploads in a row failed after retries (${err.message})`);
    } else if (err instanceof NetworkError) {
      // Renewing its form found no API: like a network failure of the upload itself.
      this.unsend({ file: file.name, path: file.path, code: 'NetworkError', message: err.message });
      if (++this.consecutiveNetworkFailures >= this.breaker) this.abort(err.message);
    } else {
      this.reject({ file: file.name, path: file.path, code: 'UploadError', message: err instanceof Error ? err.message : String(err) });
    }
  }
}
