// What moto's CloudFormation skips or ignores, made from the compiled template's own properties through each
// service's API (docs/decisions/0037-artifact-on-moto.md): the resources it reports no trace of (the HTTP API, its
// integrations, routes and stage, alarms, bucket and queue policies, the SNS subscription, the secrets), then the
// properties it drops (the bucket's notification, lifecycle, CORS, public access block and ownership; the table's TTL
// and point-in-time recovery), then the functions' environments with `{{resolve:secretsmanager:…}}` resolved.
import {
  ApiGatewayV2Client,
  CreateApiCommand,
  CreateIntegrationCommand,
  CreateRouteCommand,
  CreateStageCommand,
} from '@aws-sdk/client-apigatewayv2';
import { CloudWatchClient, PutMetricAlarmCommand, type PutMetricAlarmCommandInput } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient, UpdateContinuousBackupsCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetFunctionConfigurationCommand, LambdaClient, UpdateFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import {
  GetBucketPolicyCommand,
  type LifecycleRule,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutPublicAccessBlockCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateSecretCommand,
  GetRandomPasswordCommand,
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { clientConfig } from './deploy';
import { conditionHolds, resolve, type StackContext, type TemplateWithConditions } from './intrinsics';

type Props = Record<string, unknown>;
type Maker = (props: Props, logicalId: string) => Promise<string>;

export interface FillInClients {
  apigw: ApiGatewayV2Client;
  cloudwatch: CloudWatchClient;
  ddb: DynamoDBClient;
  lambda: LambdaClient;
  s3: S3Client;
  secrets: SecretsManagerClient;
  sns: SNSClient;
  sqs: SQSClient;
}

export function fillInClients(endpoint: string): FillInClients {
  const c = clientConfig(endpoint);
  return {
    apigw: new ApiGatewayV2Client(c),
    cloudwatch: new CloudWatchClient(c),
    ddb: new DynamoDBClient(c),
    lambda: new LambdaClient(c),
    s3: new S3Client({ ...c, forcePathStyle: true }),
    secrets: new SecretsManagerClient(c),
    sns: new SNSClient(c),
    sqs: new SQSClient(c),
  };
}

export const destroyClients = (clients: FillInClients): void => Object.values(clients).forEach((c: { destroy(): void }) => c.destroy());

/** Each skipped type, made through its service's API; each answers the physical id Ref gives on AWS. */
function makers(c: FillInClients): Record<string, Maker> {
  return {
    'AWS::SecretsManager::Secret': async (p) => {
      const gen = p.GenerateSecretString as { PasswordLength: number; ExcludePunctuation: boolean };
      const pw = await c.secrets.send(new GetRandomPasswordCommand(gen));
      const out = await c.secrets.send(
        new CreateSecretCommand({ Name: p.Name as string, Description: p.Description as string, SecretString: pw.RandomPassword }),
      );
      return out.ARN as string;
    },
    'AWS::SQS::QueuePolicy': async (p, id) => {
      for (const url of p.Queues as string[])
        await c.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { Policy: JSON.stringify(p.PolicyDocument) } }));
      return id;
    },
    'AWS::S3::BucketPolicy': async (p, id) => {
      await c.s3.send(new PutBucketPolicyCommand({ Bucket: p.Bucket as string, Policy: JSON.stringify(p.PolicyDocument) }));
      return id;
    },
    'AWS::SNS::Subscription': async (p) => {
      const input = {
        TopicArn: p.TopicArn as string,
        Protocol: p.Protocol as string,
        Endpoint: p.Endpoint as string,
        ReturnSubscriptionArn: true,
      };
      return (await c.sns.send(new SubscribeCommand(input))).SubscriptionArn as string;
    },
    'AWS::CloudWatch::Alarm': async (p) => {
      await c.cloudwatch.send(new PutMetricAlarmCommand(p as unknown as PutMetricAlarmCommandInput));
      return p.AlarmName as string;
    },
    'AWS::ApiGatewayV2::Api': async (p) =>
      (await c.apigw.send(new CreateApiCommand({ Name: p.Name as string, ProtocolType: 'HTTP' }))).ApiId as string,
    'AWS::ApiGatewayV2::Integration': async (p) => (await c.apigw.send(new CreateIntegrationCommand(p as never))).IntegrationId as string,
    'AWS::ApiGatewayV2::Route': async (p) => (await c.apigw.send(new CreateRouteCommand(p as never))).RouteId as string,
    'AWS::ApiGatewayV2::Stage': async (p) => (await c.apigw.send(new CreateStageCommand(p as never))).StageName as string,
  };
}

/** The order CloudFormation would follow for these: what others refer to first. */
const ORDER = [
  'AWS::SecretsManager::Secret',
  'AWS::ApiGatewayV2::Api',
  'AWS::ApiGatewayV2::Integration',
  'AWS::ApiGatewayV2::Route',
  'AWS::ApiGatewayV2::Stage',
  'AWS::SQS::QueuePolicy',
  'AWS::S3::BucketPolicy',
  'AWS::SNS::Subscription',
  'AWS::CloudWatch::Alarm',
];

export const SKIPPED_TYPES: readonly string[] = ORDER;

/** Makes every resource of the template moto's stack does not report; answers their logical ids. */
export async function makeSkippedResources(c: FillInClients, template: TemplateWithConditions, ctx: StackContext): Promise<string[]> {
  const made: string[] = [];
  const make = makers(c);
  for (const type of ORDER) {
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== type || logicalId in ctx.physical) continue;
      const condition = (resource as { Condition?: string }).Condition;
      if (condition && !conditionHolds(template, ctx, condition)) continue;
      const props = resolve(template, ctx, resource.Properties) as Props;
      ctx.physical[logicalId] = await (make[type] as Maker)(props, logicalId);
      made.push(logicalId);
    }
  }
  return made;
}

/** The bucket's policy as S3 answers it. */
export async function readBucketPolicy(s3: S3Client, Bucket: string): Promise<unknown> {
  return JSON.parse((await s3.send(new GetBucketPolicyCommand({ Bucket }))).Policy as string) as unknown;
}

interface CfnLifecycleRule {
  Id: string;
  Status: 'Enabled' | 'Disabled';
  Prefix: string;
  ExpirationInDays?: number;
  AbortIncompleteMultipartUpload?: { DaysAfterInitiation: number };
}

const lifecycleRule = (r: CfnLifecycleRule): LifecycleRule => ({
  ID: r.Id,
  Status: r.Status,
  Filter: { Prefix: r.Prefix },
  ...(r.ExpirationInDays ? { Expiration: { Days: r.ExpirationInDays } } : {}),
  ...(r.AbortIncompleteMultipartUpload ? { AbortIncompleteMultipartUpload: r.AbortIncompleteMultipartUpload } : {}),
});

interface CfnQueueConfiguration {
  Event: string;
  Queue: string;
  Filter: { S3Key: { Rules: { Name: 'prefix' | 'suffix'; Value: string }[] } };
}

/** The bucket's properties moto's CloudFormation drops, applied through S3's API. */
export async function applyBucketProperties(c: FillInClients, bucket: string, p: Props): Promise<void> {
  const cors = p.CorsConfiguration as {
    CorsRules: { AllowedMethods: string[]; AllowedOrigins: string[]; AllowedHeaders?: string[]; MaxAge?: number }[];
  };
  const CORSRules = cors.CorsRules.map(({ MaxAge, ...rule }) => ({ ...rule, ...(MaxAge ? { MaxAgeSeconds: MaxAge } : {}) }));
  await c.s3.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules } }));
  const rules = (p.LifecycleConfiguration as { Rules: CfnLifecycleRule[] }).Rules.map(lifecycleRule);
  await c.s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
  await c.s3.send(
    new PutPublicAccessBlockCommand({ Bucket: bucket, PublicAccessBlockConfiguration: p.PublicAccessBlockConfiguration as never }),
  );
  await c.s3.send(new PutBucketOwnershipControlsCommand({ Bucket: bucket, OwnershipControls: p.OwnershipControls as never }));
  const queues = (p.NotificationConfiguration as { QueueConfigurations: CfnQueueConfiguration[] }).QueueConfigurations;
  const QueueConfigurations = queues.map((q) => ({
    Events: [q.Event as never],
    QueueArn: q.Queue,
    Filter: { Key: { FilterRules: q.Filter.S3Key.Rules } },
  }));
  await c.s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: { QueueConfigurations } }));
}

/** The table's properties moto's CloudFormation drops: its TTL and point-in-time recovery. */
export async function applyTableProperties(c: FillInClients, table: string, p: Props): Promise<void> {
  await c.ddb.send(new UpdateTimeToLiveCommand({ TableName: table, TimeToLiveSpecification: p.TimeToLiveSpecification as never }));
  await c.ddb.send(
    new UpdateContinuousBackupsCommand({ TableName: table, PointInTimeRecoverySpecification: p.PointInTimeRecoverySpecification as never }),
  );
}

const DYNAMIC_REFERENCE = /\{\{resolve:secretsmanager:([^:}]+(?::[^:}]+){6}|[^:}]+):SecretString\}\}/g;

async function resolveSecrets(c: FillInClients, value: string): Promise<string> {
  let out = value;
  for (const m of value.matchAll(DYNAMIC_REFERENCE)) {
    const secret = await c.secrets.send(new GetSecretValueCommand({ SecretId: m[1] }));
    out = out.replace(m[0], secret.SecretString as string);
  }
  return out;
}

/**
 * Each function's environment as CloudFormation would have set it: the template's variables with every intrinsic
 * evaluated against what now exists and every `{{resolve:secretsmanager:…}}` resolved, written to moto's function.
 * Answers the names of the variables that needed it.
 */
export async function applyFunctionEnvironments(c: FillInClients, template: TemplateWithConditions, ctx: StackContext): Promise<string[]> {
  const fixed: string[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const name = ctx.physical[logicalId] as string;
    const wanted = resolve(template, ctx, (resource.Properties.Environment as { Variables: Props }).Variables) as Record<string, string>;
    for (const [k, v] of Object.entries(wanted)) wanted[k] = await resolveSecrets(c, v);
    const current = (await c.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }))).Environment?.Variables ?? {};
    const differing = Object.keys(wanted).filter((k) => current[k] !== wanted[k]);
    if (differing.length === 0) continue;
    fixed.push(...differing.map((k) => `${name}.${k}`));
    await c.lambda.send(new UpdateFunctionConfigurationCommand({ FunctionName: name, Environment: { Variables: wanted } }));
  }
  return fixed;
}
