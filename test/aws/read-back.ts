// What moto holds after the deployment and the fill-in, read back through each service's API, in the template's terms:
// the test compares it with the compiled template's own properties.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GetApisCommand, GetIntegrationsCommand, GetRoutesCommand, GetStagesCommand } from '@aws-sdk/client-apigatewayv2';
import { DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeContinuousBackupsCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetFunctionCommand } from '@aws-sdk/client-lambda';
import {
  GetBucketCorsCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketNotificationConfigurationCommand,
  GetBucketOwnershipControlsCommand,
  GetPublicAccessBlockCommand,
} from '@aws-sdk/client-s3';
import { DescribeSecretCommand } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { MotoStack } from './moto-stack';
import { FUNCTIONS, lambdaLogicalId } from './moto-stack';

export async function readHttpApi(stack: MotoStack) {
  const { apigw } = stack.clients;
  const ApiId = stack.ctx.physical.HttpApi as string;
  const apis = (await apigw.send(new GetApisCommand({}))).Items ?? [];
  const routes = (await apigw.send(new GetRoutesCommand({ ApiId }))).Items ?? [];
  const integrations = (await apigw.send(new GetIntegrationsCommand({ ApiId }))).Items ?? [];
  const stages = (await apigw.send(new GetStagesCommand({ ApiId }))).Items ?? [];
  return {
    apis: apis.map((a) => [a.Name, a.ProtocolType]),
    routeKeys: routes.map((r) => r.RouteKey as string).sort(),
    integrations: integrations.map((i) => [i.IntegrationType, i.IntegrationUri, i.PayloadFormatVersion, i.TimeoutInMillis]).sort(),
    stages: stages.map((s) => [
      s.StageName,
      s.AutoDeploy,
      s.DefaultRouteSettings?.ThrottlingRateLimit,
      s.DefaultRouteSettings?.ThrottlingBurstLimit,
    ]),
  };
}

export async function readAlarms(stack: MotoStack): Promise<string[]> {
  const out = await stack.clients.cloudwatch.send(new DescribeAlarmsCommand({ MaxRecords: 100 }));
  return [...(out.MetricAlarms ?? []), ...((out as { CompositeAlarms?: { AlarmName?: string }[] }).CompositeAlarms ?? [])]
    .map((a) => a.AlarmName as string)
    .sort();
}

export async function readPolicies(stack: MotoStack) {
  const { sqs } = stack.clients;
  const queue = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: stack.ctx.physical.UploadEventsQueue, AttributeNames: ['Policy'] }),
  );
  return { queuePolicy: JSON.parse(queue.Attributes?.Policy ?? 'null') as unknown };
}

export async function readSubscriptions(stack: MotoStack) {
  const out = await stack.clients.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: stack.ctx.physical.AlarmTopic }));
  return (out.Subscriptions ?? []).map((s) => [s.Protocol, s.Endpoint]);
}

export async function readSecrets(stack: MotoStack) {
  const names: string[] = [];
  for (const id of ['CursorSecret', 'CallbackSigningKey'])
    names.push((await stack.clients.secrets.send(new DescribeSecretCommand({ SecretId: stack.ctx.physical[id] }))).Name as string);
  return names;
}

export async function readBucket(stack: MotoStack) {
  const { s3 } = stack.clients;
  const Bucket = stack.ctx.physical.ImagesBucket as string;
  const notification = await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket }));
  const lifecycle = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket }));
  const cors = await s3.send(new GetBucketCorsCommand({ Bucket }));
  const block = await s3.send(new GetPublicAccessBlockCommand({ Bucket }));
  const ownership = await s3.send(new GetBucketOwnershipControlsCommand({ Bucket }));
  return {
    notification: (notification.QueueConfigurations ?? []).map((q) => [
      q.Events,
      q.QueueArn,
      q.Filter?.Key?.FilterRules?.map((r) => [r.Name, r.Value]),
    ]),
    lifecycle: (lifecycle.Rules ?? []).map((r) => [
      r.ID,
      r.Status,
      r.Filter?.Prefix ?? (r as { Prefix?: string }).Prefix,
      r.Expiration?.Days,
      r.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
    ]),
    cors: (cors.CORSRules ?? []).map((r) => [r.AllowedMethods, r.AllowedOrigins, r.MaxAgeSeconds]),
    publicAccessBlock: block.PublicAccessBlockConfiguration,
    ownership: ownership.OwnershipControls?.Rules?.map((r) => r.ObjectOwnership),
  };
}

export async function readTable(stack: MotoStack) {
  const { ddb } = stack.clients;
  const TableName = stack.ctx.physical.ImagesTable as string;
  const ttl = await ddb.send(new DescribeTimeToLiveCommand({ TableName }));
  const backups = await ddb.send(new DescribeContinuousBackupsCommand({ TableName }));
  return {
    ttl: [ttl.TimeToLiveDescription?.AttributeName, ttl.TimeToLiveDescription?.TimeToLiveStatus],
    pitr: backups.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus,
  };
}

/** Each function's code on moto against the packaged zip: SHA-256 (base64), as Lambda reports CodeSha256. */
export async function readCodeHashes(stack: MotoStack): Promise<{ deployed: string[]; packaged: string[] }> {
  const deployed: string[] = [];
  const packaged: string[] = [];
  for (const fn of FUNCTIONS) {
    const out = await stack.clients.lambda.send(new GetFunctionCommand({ FunctionName: stack.ctx.physical[lambdaLogicalId(fn)] }));
    deployed.push(out.Configuration?.CodeSha256 as string);
    packaged.push(
      createHash('sha256')
        .update(readFileSync(stack.packaged.artifact(fn)))
        .digest('base64'),
    );
  }
  return { deployed, packaged };
}
