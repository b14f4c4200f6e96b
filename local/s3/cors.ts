// The bucket's CORS rules as deployed (resources/storage.yml), applied to the local S3: browsers POST the presigned
// forms from the web app's origin and GET an export it redirects to, and s3rver, like S3, answers cross-origin
// requests only as the bucket's rules allow.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type CORSRule, PutBucketCorsCommand, type S3Client } from '@aws-sdk/client-s3';
import { parse } from 'yaml';
import { LocalStackError } from '../errors';

export class CorsDefinitionError extends LocalStackError {
  override name = 'CorsDefinitionError';
  readonly code = 'invalid_cors_rules';
}

interface CfnCorsRule {
  AllowedMethods: string[];
  AllowedOrigins: string[];
  AllowedHeaders?: string[];
  ExposedHeaders?: string[];
  MaxAge?: number;
}

/** An origin given as the deployed HTTP API's endpoint (`!Sub 'https://${HttpApi}.execute-api…'`): the web app's. */
const HTTP_API_ORIGIN = /^https:\/\/\$\{HttpApi\}\./;

/**
 * The CorsRules of the one AWS::S3::Bucket in a CloudFormation resources document. An origin that names the
 * deployed HTTP API (where the web app is served) stands for `webOrigin`, the local API's origin; without one, such
 * a rule is left out.
 */
export function bucketCorsRulesFromYaml(text: string, webOrigin?: string): CORSRule[] {
  // CloudFormation tags (!Sub, !Ref) elsewhere in the file do not matter here.
  const doc = parse(text, { logLevel: 'silent' }) as {
    Resources?: Record<string, { Type?: string; Properties?: { CorsConfiguration?: { CorsRules?: CfnCorsRule[] } } }>;
  };
  const buckets = Object.values(doc?.Resources ?? {}).filter((r) => r?.Type === 'AWS::S3::Bucket');
  const rules = buckets[0]?.Properties?.CorsConfiguration?.CorsRules;
  if (buckets.length !== 1 || !rules) throw new CorsDefinitionError('expected one AWS::S3::Bucket with CorsConfiguration.CorsRules');
  const local = (origins: string[]) => origins.flatMap((o) => (HTTP_API_ORIGIN.test(o) ? (webOrigin ? [webOrigin] : []) : [o]));
  return rules
    .map((r) => ({ ...r, AllowedOrigins: local(r.AllowedOrigins) }))
    .filter((r) => r.AllowedOrigins.length > 0)
    .map((r) => ({
      AllowedMethods: r.AllowedMethods,
      AllowedOrigins: r.AllowedOrigins,
      ...(r.AllowedHeaders ? { AllowedHeaders: r.AllowedHeaders } : {}),
      ...(r.ExposedHeaders ? { ExposedHeaders: r.ExposedHeaders } : {}),
      ...(r.MaxAge !== undefined ? { MaxAgeSeconds: r.MaxAge } : {}),
    }));
}

/** The deployed bucket's CORS rules on the local bucket; `webOrigin`: where the local API serves the web app. */
export async function applyBucketCors(s3: S3Client, bucket: string, projectDir: string, webOrigin?: string): Promise<void> {
  const rules = bucketCorsRulesFromYaml(await readFile(path.join(projectDir, 'resources', 'storage.yml'), 'utf8'), webOrigin);
  await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }));
}
