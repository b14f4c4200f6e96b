// The bucket's CORS rules as deployed (resources/storage.yml), applied to the local S3: browsers POST the presigned
// forms from the web app's origin, and s3rver, like S3, answers cross-origin requests only as the bucket's rules allow.
import { PutBucketCorsCommand, type CORSRule, type S3Client } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

export class CorsDefinitionError extends Error {
  override name = 'CorsDefinitionError';
}

interface CfnCorsRule {
  AllowedMethods: string[];
  AllowedOrigins: string[];
  AllowedHeaders?: string[];
  ExposedHeaders?: string[];
  MaxAge?: number;
}

/** The CorsRules of the one AWS::S3::Bucket in a CloudFormation resources document. */
export function bucketCorsRulesFromYaml(text: string): CORSRule[] {
  // CloudFormation tags (!Sub, !Ref) elsewhere in the file do not matter here.
  const doc = parse(text, { logLevel: 'silent' }) as {
    Resources?: Record<string, { Type?: string; Properties?: { CorsConfiguration?: { CorsRules?: CfnCorsRule[] } } }>;
  };
  const buckets = Object.values(doc?.Resources ?? {}).filter((r) => r?.Type === 'AWS::S3::Bucket');
  const rules = buckets[0]?.Properties?.CorsConfiguration?.CorsRules;
  if (buckets.length !== 1 || !rules) throw new CorsDefinitionError('expected one AWS::S3::Bucket with CorsConfiguration.CorsRules');
  return rules.map((r) => ({
    AllowedMethods: r.AllowedMethods,
    AllowedOrigins: r.AllowedOrigins,
    ...(r.AllowedHeaders ? { AllowedHeaders: r.AllowedHeaders } : {}),
    ...(r.ExposedHeaders ? { ExposedHeaders: r.ExposedHeaders } : {}),
    ...(r.MaxAge !== undefined ? { MaxAgeSeconds: r.MaxAge } : {}),
  }));
}

export async function applyBucketCors(s3: S3Client, bucket: string, projectDir: string): Promise<void> {
  const rules = bucketCorsRulesFromYaml(await readFile(path.join(projectDir, 'resources', 'storage.yml'), 'utf8'));
  await s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }));
}
