// S3 Batch Operations' LambdaInvoke event and the response it expects (docs/decisions/0042), as AWS documents them;
// no local engine sends them, so they are kept as published, not captured:
// - s3-batch-operations-invocation.json: the invocation schema 2.0 request (job.userArguments, tasks[].s3Bucket) of the
//   Amazon S3 User Guide, "Invoke AWS Lambda function" (batch-ops-invoke-lambda), byte for byte as Powertools for AWS
//   Lambda (Python) keeps it for its tests (tests/events/s3BatchOperationEventSchemaV2.json).
// - s3-batch-operations-response.json: the User Guide's example response (invocationSchemaVersion copied from the
//   request, treatMissingKeysAs, invocationId, results[{taskId, resultCode, resultString}]); its resultString's
//   unescaped quote (invalid JSON in the guide) is escaped here.
// Keys in a task are URL-encoded as in the job's manifest (the guide: "keys from S3 Batch Operations are URL encoded").

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { S3BatchEvent } from 'aws-lambda';

/** A schema 2.0 invocation: the task's bucket by name, the job's UserArguments passed along. */
export interface S3BatchInvocation extends Omit<S3BatchEvent, 'job' | 'tasks'> {
  job: { id: string; userArguments?: Record<string, string> };
  tasks: { taskId: string; s3Key: string; s3VersionId: string | null; s3Bucket: string }[];
}

export interface S3BatchResponse {
  invocationSchemaVersion: string;
  treatMissingKeysAs: string;
  invocationId: string;
  results: { taskId: string; resultCode: string; resultString: string }[];
}

const load = <T>(name: string): T => JSON.parse(readFileSync(path.join(__dirname, name), 'utf8')) as T;

export const s3BatchInvocationEvent = (): S3BatchInvocation => load('s3-batch-operations-invocation.json');
export const s3BatchResponseExample = (): S3BatchResponse => load('s3-batch-operations-response.json');

/** The documented invocation re-aimed at one object of an import: its job's UserArguments, bucket and (encoded) key. */
export function s3BatchInvocationFor(
  userArguments: Record<string, string>,
  task: { bucket: string; encodedKey: string; versionId?: string; taskId?: string },
): S3BatchInvocation {
  const event = s3BatchInvocationEvent();
  event.job.userArguments = userArguments;
  const t = event.tasks[0]!;
  t.s3Bucket = task.bucket;
  t.s3Key = task.encodedKey;
  t.s3VersionId = task.versionId ?? null;
  if (task.taskId) t.taskId = task.taskId;
  return event;
}

/** A key as a Batch Operations manifest holds it (and the task event passes it): URL-encoded, `/` kept. */
export const encodeManifestKey = (key: string): string => encodeURIComponent(key).replace(/%2F/g, '/');
