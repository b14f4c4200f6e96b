// The S3 Batch Operations task of an import on AWS (docs/decisions/0042): Batch Operations invokes the import-task
// function once per object of the job's manifest, with its Lambda invocation event (schema 2.0), and this sends that
// object to the uploads queue through enqueueSourceObject (lib/import/enqueue.ts), as the local lister does: counted
// against the images quota, in its client's message group, at most once however often the task is redriven. Its answer
// is the response Batch Operations expects: one result per task, `Succeeded`, `TemporaryFailure` (redriven by the job:
// throttling, a transient fault, today's quota used up) or `PermanentFailure` (bad input: in the completion report).
// A key that is no image by its name is skipped (`Succeeded`, "skipped: …"), and each object is counted in the import's
// progress (listed, enqueued, skipped: the local lister's counters) once, on its upload item (lib/store/imports/jobs.ts).
//
// The job's UserArguments (set by the batches function when it creates the job, lib/import/batch-operations.ts) name
// the batch and what it may read: `clientId`, `batchId`, `expiresAt` (the batch's expiry, epoch s) and `allow` (a JSON
// array of `s3://bucket/prefix` the objects must be under: the batch's source, or for a manifest the client's allowed
// sources, which Batch Operations reads without us).
import * as z from 'zod/mini';
import '../validation-messages';
import type { SourceObject } from '../domain/image';
import { IceCatError, type IceCatErrorOptions } from '../errors';
import { ID_PATTERN, ID_RULE } from '../ids';
import { type EnqueueDeps, enqueueSourceObject, type ImportRef, type ImportTarget, importRef, nextUtcMidnight, sourceUri } from './enqueue';
import { isImageKey } from './sources';

type TaskResultCode = 'Succeeded' | 'TemporaryFailure' | 'PermanentFailure';

/** One task's answer: its result string is the completion report's ResultMessage. */
interface TaskResult {
  taskId: string;
  resultCode: TaskResultCode;
  resultString: string;
}

/** What Batch Operations expects back from a LambdaInvoke function. */
export interface BatchOperationsResponse {
  invocationSchemaVersion: string;
  treatMissingKeysAs: TaskResultCode;
  invocationId: string;
  results: TaskResult[];
}

/** The invocation is not a Batch Operations event at all (no invocation id or tasks): nothing can be answered. */
class InvalidInvocationError extends IceCatError {
  override name = 'InvalidInvocationError';
  readonly code = 'invalid_invocation';
  constructor(message: string, options?: IceCatErrorOptions) {
    super(message, options);
  }
}

// Batch Operations may add fields: the envelope and tasks are read loosely, what is used is checked.
const envelopeSchema = z.looseObject({
  invocationSchemaVersion: z.string(),
  invocationId: z.string().check(z.minLength(1)),
  job: z.looseObject({ id: z.string(), userArguments: z.optional(z.nullable(z.record(z.string(), z.string()))) }),
  tasks: z.array(z.looseObject({ taskId: z.string().check(z.minLength(1)) })),
});

const taskSchema = z.looseObject({
  taskId: z.string(),
  s3Key: z.string().check(z.minLength(1)),
  s3VersionId: z.optional(z.nullable(z.string())),
  /** Schema 2.0: the bucket's name. */
  s3Bucket: z.optional(z.string()),
  /** Schema 1.0: the bucket's ARN. */
  s3BucketArn: z.optional(z.string()),
});

/** Task results Batch Operations keeps: a report's ResultMessage is short. */
const MAX_RESULT = 1024;
const clip = (s: string): string => (s.length <= MAX_RESULT ? s : `${s.slice(0, MAX_RESULT - 1)}…`);

/** An `s3://bucket/prefix` a job's objects must be under. */
interface AllowedPrefix {
  bucket: string;
  prefix: string;
}

export const parseS3Prefix = (uri: string): AllowedPrefix | undefined => {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri);
  return m ? { bucket: m[1] as string, prefix: m[2] ?? '' } : undefined;
};

/** The job's target, read from its UserArguments; a string says what is wrong with them. */
interface JobArguments {
  target: ImportTarget;
  allow: AllowedPrefix[];
}

export function jobArguments(args: Record<string, string> | null | undefined): JobArguments | string {
  if (!args) return 'the job has no userArguments (it must be created with InvocationSchemaVersion 2.0 and UserArguments)';
  const { clientId, batchId, expiresAt, allow } = args;
  if (!clientId || !ID_PATTERN.test(clientId)) return `userArguments.clientId must be ${ID_RULE}`;
  if (!batchId || !ID_PATTERN.test(batchId)) return `userArguments.batchId must be ${ID_RULE}`;
  const expires = Number(expiresAt);
  if (!expiresAt || !Number.isSafeInteger(expires) || expires <= 0) return 'userArguments.expiresAt must be epoch seconds';
  let uris: unknown;
  try {
    uris = JSON.parse(allow ?? '');
  } catch {
    uris = undefined;
  }
  const prefixes = Array.isArray(uris) ? uris.map((u) => (typeof u === 'string' ? parseS3Prefix(u) : undefined)) : [];
  if (prefixes.length === 0 || prefixes.some((p) => p === undefined))
    return 'userArguments.allow must be a JSON array of s3://bucket/prefix';
  return { target: { clientId, batchId, expiresAt: expires }, allow: prefixes as AllowedPrefix[] };
}

/** Batch Operations sends keys URL-encoded (a manifest's form, `+` for a space): S3's own key, or undefined. */
export function decodeTaskKey(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

const bucketOf = (task: z.infer<typeof taskSchema>): string | undefined =>
  task.s3Bucket ?? (task.s3BucketArn ? /^arn:[^:]+:s3:::([^/]+)$/.exec(task.s3BucketArn)?.[1] : undefined);

/** The task's object, or what is wrong with it. */
export function taskObject(raw: unknown, allow: AllowedPrefix[]): SourceObject | string {
  const parsed = taskSchema.safeParse(raw);
  if (!parsed.success) return `the task is not a Batch Operations task: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
  const bucket = bucketOf(parsed.data);
  if (!bucket) return 'the task names no bucket (s3Bucket)';
  const key = decodeTaskKey(parsed.data.s3Key);
  if (key === undefined) return `the key ${JSON.stringify(parsed.data.s3Key)} is not URL-encoded as Batch Operations sends keys`;
  if (Buffer.byteLength(key) > 1024) return 'the key is longer than S3 allows (1,024 bytes)';
  const object: SourceObject = { bucket, key, ...(parsed.data.s3VersionId ? { versionId: parsed.data.s3VersionId } : {}) };
  if (!allow.some((a) => a.bucket === bucket && key.startsWith(a.prefix)))
    return `${sourceUri(object)} is outside the batch's source (${allow.map((a) => `s3://${a.bucket}/${a.prefix}`).join(', ')})`;
  return object;
}

const THROTTLING = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'SlowDown',
  'KmsThrottled',
]);
const TRANSIENT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'InternalServerError', 'ServiceUnavailable']);
const NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

type SdkError = Error & { $retryable?: { throttling?: boolean }; $metadata?: { httpStatusCode?: number }; code?: string };

/** Whether a failed call is worth redriving: throttling, a service's 5xx, a timeout or a dropped connection. */
export function isRetryableFault(err: unknown): 'throttled' | 'transient' | false {
  if (!(err instanceof Error)) return false;
  const e = err as SdkError;
  if (THROTTLING.has(e.name) || e.$retryable?.throttling) return 'throttled';
  if (TRANSIENT.has(e.name) || e.$retryable || (e.$metadata?.httpStatusCode ?? 0) >= 500 || NETWORK.has(e.code ?? '')) return 'transient';
  return false;
}

/** The import's progress as its tasks move it (lib/store/imports/jobs.ts ImportJobsStore). */
export interface TaskProgress {
  /** Counts the object as enqueued or skipped, once however often its task runs. */
  countObject(object: ImportRef, as: 'enqueued' | 'skipped'): Promise<boolean>;
  /** Today's quota is used up: the import waits for the reset (epoch ms). */
  waitForQuota(clientId: string, batchId: string, resumesAt: number): Promise<void>;
}

export interface TaskDeps extends EnqueueDeps {
  progress: TaskProgress;
}

/** One task sent on: its object enqueued once (a non-image skipped by its name), or the result saying why not. */
export async function runTask(deps: TaskDeps, job: JobArguments | string, raw: { taskId: string }): Promise<TaskResult> {
  const answer = (resultCode: TaskResultCode, resultString: string): TaskResult => ({
    taskId: raw.taskId,
    resultCode,
    resultString: clip(resultString),
  });
  if (typeof job === 'string') return answer('PermanentFailure', `InvalidJob: ${job}`);
  const object = taskObject(raw, job.allow);
  if (typeof object === 'string') return answer('PermanentFailure', `InvalidTask: ${object}`);
  const ref = importRef(job.target, object);
  try {
    // As the local lister: a key that is no image by its name is never sent, only counted as skipped.
    if (!isImageKey(object.key)) {
      await deps.progress.countObject(ref, 'skipped');
      return answer('Succeeded', `skipped: ${sourceUri(object)} is not an image by its name`);
    }
    const outcome = await enqueueSourceObject(deps, job.target, object);
    if (outcome === 'over-quota') {
      const resumesAt = nextUtcMidnight((deps.now ?? Date.now)());
      await deps.progress.waitForQuota(job.target.clientId, job.target.batchId, resumesAt);
      return answer(
        'TemporaryFailure',
        `QuotaExceeded: today's images quota of ${job.target.clientId} is used up; the import goes on at ${new Date(resumesAt).toISOString()}`,
      );
    }
    // Sent now or by an earlier run of this task: counted once either way (a run that died before counting is made good).
    await deps.progress.countObject(ref, 'enqueued');
    return answer('Succeeded', outcome === 'enqueued' ? `enqueued ${sourceUri(object)}` : `sent before: ${sourceUri(object)}`);
  } catch (err) {
    const retryable = isRetryableFault(err);
    const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (retryable) return answer('TemporaryFailure', `${retryable === 'throttled' ? 'Throttled' : 'Transient'}: ${what}`);
    return answer('PermanentFailure', what);
  }
}

/** Answers one Batch Operations invocation: each task run in turn (Batch Operations sends one a call). */
export async function answerInvocation(deps: TaskDeps, event: unknown): Promise<BatchOperationsResponse> {
  const envelope = envelopeSchema.safeParse(event);
  if (!envelope.success) {
    throw new InvalidInvocationError(`not an S3 Batch Operations invocation: ${envelope.error.issues[0]?.message ?? 'invalid'}`);
  }
  const { invocationSchemaVersion, invocationId, job, tasks } = envelope.data;
  const args =
    invocationSchemaVersion === '2.0'
      ? jobArguments(job.userArguments)
      : `invocationSchemaVersion ${invocationSchemaVersion}: the job must invoke with 2.0 (its UserArguments name the batch)`;
  const results: TaskResult[] = [];
  for (const task of tasks) results.push(await runTask(deps, args, task));
  // A key Batch Operations expected an answer for and did not get is redriven, not lost.
  return { invocationSchemaVersion, treatMissingKeysAs: 'TemporaryFailure', invocationId, results };
}
