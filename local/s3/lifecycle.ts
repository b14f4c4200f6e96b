// The bucket's lifecycle rules as deployed (resources/storage.yml, their days from serverless.yml's custom settings),
// applied to the local S3, which has none of its own: an object under a rule's prefix is deleted once its days have
// passed, counted as S3 counts them. The expiry sweep erases each batch at its own expiry; these rules are what S3
// would still do: uploads never processed (14 days), exports (a day), and the backstop of the other prefixes.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { parse } from 'yaml';
import { LocalStackError } from '../errors';

export class LifecycleDefinitionError extends LocalStackError {
  override name = 'LifecycleDefinitionError';
  readonly code = 'invalid_lifecycle_rules';
}

export interface LifecycleRule {
  prefix: string;
  days: number;
}

interface CfnLifecycleRule {
  Id?: string;
  Status?: string;
  Prefix?: string;
  ExpirationInDays?: number | string;
}

const DAY_MS = 86_400_000;

/** `${self:custom.a.b}` looked up in serverless.yml's settings; a number stays as it is. */
function resolveDays(value: number | string | undefined, settings: unknown, prefix: string): number {
  if (typeof value === 'number') return value;
  const ref = /^\$\{self:([A-Za-z0-9_.]+)\}$/.exec(value ?? '');
  const found = ref?.[1]?.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], settings);
  const days = Number(found);
  if (!ref || !Number.isInteger(days) || days < 1)
    throw new LifecycleDefinitionError(`rule for ${prefix}: cannot resolve ExpirationInDays ${String(value)}`);
  return days;
}

/** The enabled expiration rules of the one AWS::S3::Bucket in `storageYaml`, days resolved against `serverlessYaml`. */
export function bucketLifecycleRulesFromYaml(storageYaml: string, serverlessYaml: string): LifecycleRule[] {
  // CloudFormation tags (!Sub, !Ref) elsewhere in the files do not matter here.
  const doc = parse(storageYaml, { logLevel: 'silent' }) as {
    Resources?: Record<string, { Type?: string; Properties?: { LifecycleConfiguration?: { Rules?: CfnLifecycleRule[] } } }>;
  };
  const settings = parse(serverlessYaml, { logLevel: 'silent' }) as unknown;
  const buckets = Object.values(doc?.Resources ?? {}).filter((r) => r?.Type === 'AWS::S3::Bucket');
  const rules = buckets[0]?.Properties?.LifecycleConfiguration?.Rules;
  if (buckets.length !== 1 || !rules) throw new LifecycleDefinitionError('expected one AWS::S3::Bucket with LifecycleConfiguration.Rules');
  return rules
    .filter((r) => r.Status === 'Enabled' && r.ExpirationInDays !== undefined && typeof r.Prefix === 'string')
    .map((r) => ({ prefix: r.Prefix as string, days: resolveDays(r.ExpirationInDays, settings, r.Prefix as string) }));
}

export async function loadBucketLifecycleRules(projectDir: string): Promise<LifecycleRule[]> {
  const [storage, service] = await Promise.all(
    ['resources/storage.yml', 'serverless.yml'].map((file) => readFile(path.join(projectDir, file), 'utf8')),
  );
  return bucketLifecycleRulesFromYaml(storage as string, service as string);
}

/** S3's rule: creation time plus the days, rounded up to the next midnight UTC. */
export function isExpiredObject(rule: LifecycleRule, lastModified: Date, now: number): boolean {
  const due = lastModified.getTime() + rule.days * DAY_MS;
  return now >= Math.ceil(due / DAY_MS) * DAY_MS;
}

/**
 * Deletes every object its rule has expired, except those `keep` names; answers how many, per prefix. The local stack
 * keeps an upload whose message its queue still holds: its journal outlives a stack stopped for weeks, where SQS
 * would have handed the message to the ingest long before the rule's days.
 */
export async function applyLifecycle(
  s3: S3Client,
  bucket: string,
  rules: readonly LifecycleRule[],
  now: number,
  keep: (key: string) => boolean = () => false,
): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const rule of rules) {
    let count = 0;
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: rule.prefix, ContinuationToken: token }));
      const expired = (page.Contents ?? []).flatMap((o) =>
        o.Key && o.LastModified && isExpiredObject(rule, o.LastModified, now) && !keep(o.Key) ? [o.Key] : [],
      );
      if (expired.length > 0) {
        await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: expired.map((Key) => ({ Key })), Quiet: true } }));
        count += expired.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    deleted[rule.prefix] = count;
  }
  return deleted;
}
