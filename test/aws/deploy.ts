// The packaged stack deployed into moto's CloudFormation as osls deploys it: the create-stack template (the deployment
// bucket), each function's zip uploaded to its S3Key, then the compiled template as a stack update from that bucket.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
  type Parameter,
  UpdateStackCommand,
} from '@aws-sdk/client-cloudformation';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Packaged } from '../deploy/packaged';
import { ROOT } from '../deploy/packaged';

export const STACK_NAME = 'icecat-wrangler-dev';
export const REGION = 'us-east-1';
/** moto's default account. */
export const ACCOUNT_ID = '123456789012';
/** The test's own credentials (the operator deploying); moto accepts any. */
export const OPERATOR = { accessKeyId: 'AKIAOPERATOR00000000', secretAccessKey: 'operator-secret' };

export const clientConfig = (endpoint: string) => ({
  endpoint,
  region: REGION,
  credentials: OPERATOR,
  maxAttempts: 1,
});

export interface Deployed {
  status: string;
  /** Logical id → physical id, of what moto's CloudFormation reports. */
  physical: Record<string, string>;
  /** Logical id → resource type, of what it reports. */
  types: Record<string, string>;
}

async function stackStatus(cfn: CloudFormationClient): Promise<string> {
  for (let i = 0; i < 300; i += 1) {
    const out = await cfn.send(new DescribeStacksCommand({ StackName: STACK_NAME }));
    const status = out.Stacks?.[0]?.StackStatus ?? 'MISSING';
    if (!status.endsWith('_IN_PROGRESS')) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${STACK_NAME} still in progress after 30 s`);
}

interface LambdaCode {
  S3Key: string;
}

/** Deploys as osls does; answers the stack's status and resources as moto reports them. */
export async function deployStack(endpoint: string, packaged: Packaged, parameters: Record<string, string>): Promise<Deployed> {
  const cfn = new CloudFormationClient(clientConfig(endpoint));
  const s3 = new S3Client({ ...clientConfig(endpoint), forcePathStyle: true });
  try {
    const createBody = readFileSync(path.join(ROOT, '.serverless', 'cloudformation-template-create-stack.json'), 'utf8');
    await cfn.send(new CreateStackCommand({ StackName: STACK_NAME, TemplateBody: createBody, Capabilities: ['CAPABILITY_NAMED_IAM'] }));
    const created = await stackStatus(cfn);
    if (created !== 'CREATE_COMPLETE') throw new Error(`create-stack ended ${created}`);
    const resources = await cfn.send(new DescribeStackResourcesCommand({ StackName: STACK_NAME }));
    const bucket = resources.StackResources?.find((r) => r.LogicalResourceId === 'ServerlessDeploymentBucket')
      ?.PhysicalResourceId as string;
    for (const [logicalId, resource] of Object.entries(packaged.template.Resources)) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const key = (resource.Properties.Code as LambdaCode).S3Key;
      const name = path.basename(key, '.zip');
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(packaged.artifact(name)) }));
      void logicalId;
    }
    const templateKey = `serverless/${STACK_NAME}/compiled-cloudformation-template.json`;
    const body = readFileSync(path.join(ROOT, '.serverless', 'cloudformation-template-update-stack.json'));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: templateKey, Body: body }));
    const Parameters: Parameter[] = Object.entries(parameters).map(([ParameterKey, ParameterValue]) => ({ ParameterKey, ParameterValue }));
    await cfn.send(
      new UpdateStackCommand({
        StackName: STACK_NAME,
        TemplateURL: `https://${bucket}.s3.amazonaws.com/${templateKey}`,
        Parameters,
        Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM', 'CAPABILITY_AUTO_EXPAND'],
      }),
    );
    const status = await stackStatus(cfn);
    const all = await cfn.send(new DescribeStackResourcesCommand({ StackName: STACK_NAME }));
    const physical: Record<string, string> = {};
    const types: Record<string, string> = {};
    for (const r of all.StackResources ?? []) {
      physical[r.LogicalResourceId as string] = r.PhysicalResourceId as string;
      types[r.LogicalResourceId as string] = r.ResourceType as string;
    }
    return { status, physical, types };
  } finally {
    cfn.destroy();
    s3.destroy();
  }
}
