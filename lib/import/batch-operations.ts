// An import's fan-out on AWS: one S3 Batch Operations job per import (docs/decisions/0042), which invokes the
// importTask function (lib/import/batch-operations-task.ts) once per object. The job's manifest is the client's own
// (a Batch Operations CSV or an S3 Inventory manifest.json), or for a bucket and prefix one Batch Operations generates
// (S3JobManifestGenerator, a KeyNameConstraint on the prefix). Its completion report goes to the stack's bucket.
//
// The port is ImportEngine: the batches function, when it opens an import batch on AWS, calls `start` once the source
// passed the client's allowed sources (403 otherwise); the local stack keeps its own lister (lib/import/lister.ts) and
// never builds this engine.

import { createHash } from 'node:crypto';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  CreateJobCommand,
  type CreateJobCommandInput,
  DescribeJobCommand,
  type JobManifestSpec,
  type S3ControlClient,
} from '@aws-sdk/client-s3-control';
import type { ImportSource } from '../domain/import';
import { IceCatError, type IceCatErrorOptions } from '../errors';
import { parseS3Prefix } from './batch-operations-task';

/** One import to start: its batch, its source and the prefixes its objects must be under. */
export interface ImportJob {
  clientId: string;
  batchId: string;
  /** Epoch s: the batch's expiry. */
  expiresAt: number;
  source: ImportSource;
  /** `s3://bucket/prefix`: the batch's source for a prefix, the client's allowed sources for a manifest. */
  allow: string[];
  /** 1 for the first job of the batch; a job started again (after the quota's reset, or a retry) counts on. */
  attempt?: number;
}

export interface ImportEngine {
  /** Refuses (ImportSourceError) a source no job could read: a manifest's ETag and columns, read before the batch is made. */
  check(source: ImportSource): Promise<void>;
  start(job: ImportJob): Promise<{ jobId: string }>;
  /** Where the job is: `over` once Batch Operations has ended it (Complete, Failed or Cancelled). */
  describe(jobId: string): Promise<ImportJobStatus>;
}

/** A job as DescribeJob answers it: its status and its tasks' counts. */
export interface ImportJobStatus {
  status: string;
  over: boolean;
  tasks: { total: number; succeeded: number; failed: number };
  /** Why the job failed, when it did (DescribeJob's FailureReasons). */
  failure?: string;
}

/** Batch Operations' statuses a job never leaves (DescribeJob, "Job statuses" of the S3 User Guide). */
export const JOB_OVER = new Set(['Complete', 'Failed', 'Cancelled']);

/** The stack's side of every job: where it runs, what it invokes, as whom, and where it reports. */
export interface BatchOperationsSettings {
  accountId: string;
  partition?: string;
  /** The importTask function's ARN. */
  taskFunctionArn: string;
  /** The job role Batch Operations assumes (resources/imports.yml ImportJobRole). */
  jobRoleArn: string;
  /** The stack's bucket: completion reports go under imports/{clientId}/{batchId}/. */
  reportBucket: string;
  /** Batch Operations' priority for import jobs (higher runs first). */
  priority: number;
}

class ImportSourceError extends IceCatError {
  override name = 'ImportSourceError';
  readonly code = 'invalid_import_source';
  readonly source: string;
  constructor(message: string, options: IceCatErrorOptions & { source: string }) {
    super(message, options);
    this.source = options.source;
  }
}

/** UserArguments: at most 10 entries, values of at most 1,024 characters (CreateJob's LambdaInvokeOperation). */
const MAX_ARGUMENT = 1024;

/** The manifest Batch Operations reads for a given manifest: its format, columns and ETag (CreateJob needs it). */
interface ManifestFacts {
  bucket: string;
  key: string;
  etag: string;
  /** S3 Inventory's manifest.json, or a CSV of 2 (Bucket, Key) or 3 (…, VersionId) columns. */
  format: 'inventory' | 'csv2' | 'csv3';
}

const reportPrefix = (clientId: string, batchId: string): string => `imports/${clientId}/${batchId}`;

/** CreateJob's idempotency token (1–64 characters): one job per batch and attempt, however often the call is sent. */
export const jobToken = (job: Pick<ImportJob, 'clientId' | 'batchId' | 'attempt'>): string =>
  createHash('sha256')
    .update(`${job.clientId}#${job.batchId}#${job.attempt ?? 1}`)
    .digest('hex')
    .slice(0, 64);

function userArguments(job: ImportJob): Record<string, string> {
  const allow = JSON.stringify(job.allow);
  if (job.allow.length === 0 || job.allow.some((a) => !parseS3Prefix(a)))
    throw new ImportSourceError('an import needs the s3://bucket/prefix its objects must be under', { source: allow });
  if (allow.length > MAX_ARGUMENT)
    throw new ImportSourceError(`the allowed sources take ${allow.length} characters; a job's argument holds ${MAX_ARGUMENT}`, {
      source: allow,
    });
  return { clientId: job.clientId, batchId: job.batchId, expiresAt: String(job.expiresAt), allow };
}

/** CreateJob's input for one import: pure, so the template's roles can be checked against exactly what it asks. */
export function createJobInput(s: BatchOperationsSettings, job: ImportJob, manifest?: ManifestFacts): CreateJobCommandInput {
  const p = s.partition ?? 'aws';
  const base: CreateJobCommandInput = {
    AccountId: s.accountId,
    ConfirmationRequired: false,
    Operation: { LambdaInvoke: { FunctionArn: s.taskFunctionArn, InvocationSchemaVersion: '2.0', UserArguments: userArguments(job) } },
    Report: {
      Enabled: true,
      Bucket: `arn:${p}:s3:::${s.reportBucket}`,
      Prefix: reportPrefix(job.clientId, job.batchId),
      Format: 'Report_CSV_20180820',
      ReportScope: 'AllTasks',
    },
    ClientRequestToken: jobToken(job),
    Priority: s.priority,
    RoleArn: s.jobRoleArn,
    Description: `icecat import ${job.clientId}/${job.batchId}`.slice(0, 256),
  };
  if ('manifest' in job.source) {
    if (!manifest) throw new ImportSourceError('a manifest import needs the manifest read first', { source: job.source.manifest });
    const Spec: JobManifestSpec =
      manifest.format === 'inventory'
        ? { Format: 'S3InventoryReport_CSV_20161130' }
        : {
            Format: 'S3BatchOperations_CSV_20180820',
            Fields: manifest.format === 'csv3' ? ['Bucket', 'Key', 'VersionId'] : ['Bucket', 'Key'],
          };
    return { ...base, Manifest: { Spec, Location: manifestLocation(p, manifest) } };
  }
  const { bucket, prefix } = job.source;
  return {
    ...base,
    ManifestGenerator: {
      S3JobManifestGenerator: {
        SourceBucket: `arn:${p}:s3:::${bucket}`,
        EnableManifestOutput: false,
        ...(prefix !== '' ? { Filter: { KeyNameConstraint: { MatchAnyPrefix: [prefix] } } } : {}),
      },
    },
  };
}

const manifestLocation = (p: string, m: ManifestFacts) => ({ ObjectArn: `arn:${p}:s3:::${m.bucket}/${m.key}`, ETag: m.etag });

/** `s3://bucket/key` of a manifest, split. */
export function manifestObject(uri: string): { bucket: string; key: string } {
  const at = parseS3Prefix(uri);
  if (!at || at.prefix === '' || at.prefix.endsWith('/'))
    throw new ImportSourceError(`${uri} is not the s3://bucket/key of a manifest`, { source: uri });
  return { bucket: at.bucket, key: at.prefix };
}

/** A manifest's format from its key and first line: an Inventory manifest.json, else a CSV of 2 or 3 columns. */
export function manifestFormat(key: string, firstLine: string): ManifestFacts['format'] {
  if (key.endsWith('manifest.json')) return 'inventory';
  const columns = firstLine.replace(/\r$/, '').split(',').length;
  if (columns === 2) return 'csv2';
  if (columns === 3) return 'csv3';
  throw new ImportSourceError(`the manifest's lines have ${columns} columns; Batch Operations reads bucket,key[,versionId]`, {
    source: key,
  });
}

/** Reads what CreateJob needs of a manifest (its ETag, its format from the first 4 KiB): one ranged GetObject. */
export async function readManifestFacts(s3: Pick<S3Client, 'send'>, uri: string): Promise<ManifestFacts> {
  const { bucket, key } = manifestObject(uri);
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: 'bytes=0-4095' }));
  const head = (await out.Body?.transformToString('utf8')) ?? '';
  const etag = out.ETag?.replace(/"/g, '');
  if (!etag) throw new ImportSourceError(`${uri} answered no ETag`, { source: uri });
  return { bucket, key, etag, format: manifestFormat(key, head.split('\n')[0] ?? '') };
}

/** The engine on AWS: CreateJob, once per batch and attempt (the token makes a repeated call the same job). */
export class S3BatchOperationsEngine implements ImportEngine {
  constructor(
    private readonly deps: { s3control: Pick<S3ControlClient, 'send'>; s3: Pick<S3Client, 'send'>; settings: BatchOperationsSettings },
  ) {}

  async check(source: ImportSource): Promise<void> {
    if ('manifest' in source) await readManifestFacts(this.deps.s3, source.manifest);
  }

  async describe(jobId: string): Promise<ImportJobStatus> {
    const out = await this.deps.s3control.send(new DescribeJobCommand({ AccountId: this.deps.settings.accountId, JobId: jobId }));
    const status = out.Job?.Status ?? 'Unknown';
    const p = out.Job?.ProgressSummary;
    const reasons = (out.Job?.FailureReasons ?? []).map((r) => `${r.FailureCode ?? ''}: ${r.FailureReason ?? ''}`);
    return {
      status,
      over: JOB_OVER.has(status),
      tasks: { total: p?.TotalNumberOfTasks ?? 0, succeeded: p?.NumberOfTasksSucceeded ?? 0, failed: p?.NumberOfTasksFailed ?? 0 },
      ...(reasons.length > 0 ? { failure: reasons.join('; ') } : {}),
    };
  }

  async start(job: ImportJob): Promise<{ jobId: string }> {
    const manifest = 'manifest' in job.source ? await readManifestFacts(this.deps.s3, job.source.manifest) : undefined;
    const out = await this.deps.s3control.send(new CreateJobCommand(createJobInput(this.deps.settings, job, manifest)));
    if (!out.JobId) throw new ImportSourceError('CreateJob answered no job id', { source: JSON.stringify(job.source) });
    return { jobId: out.JobId };
  }
}
