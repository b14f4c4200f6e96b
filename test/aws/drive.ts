// Drives the deployed functions as their AWS sources do: an HTTP request through the route API Gateway matches (from
// the routes made on moto) to the function its integration names; a queue polled as Lambda's event source mapping
// polls it (with the function's role, the configured batch size, the failed messages left for their retry); a rule's
// schedule firing.
import { GetIntegrationsCommand, GetRoutesCommand } from '@aws-sdk/client-apigatewayv2';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSBatchResponse } from 'aws-lambda';
import { ACCOUNT_ID, REGION } from './deploy';
import { type HttpRequest, httpApiEvent, scheduledEvent, sqsEvent } from './lambda-events';
import type { Invocation } from './lambda-runtime';
import { FUNCTIONS, type FunctionName, lambdaLogicalId, type MotoStack } from './moto-stack';

export interface HttpAnswer {
  routeKey: string;
  functionName: FunctionName;
  status: number;
  headers: Record<string, string>;
  body: string;
  json: unknown;
}

export interface HttpApi {
  routeKeys: string[];
  /** Route key → the function its integration invokes. */
  functionOf: Record<string, FunctionName>;
  /** Route keys requests have matched so far. */
  exercised: Set<string>;
  send(request: HttpRequest): Promise<HttpAnswer>;
}

/** API Gateway in front of the functions, from the API, routes and integrations on moto. */
export async function httpApi(stack: MotoStack): Promise<HttpApi> {
  const ApiId = stack.ctx.physical.HttpApi as string;
  const routes = (await stack.clients.apigw.send(new GetRoutesCommand({ ApiId }))).Items ?? [];
  const integrations = (await stack.clients.apigw.send(new GetIntegrationsCommand({ ApiId }))).Items ?? [];
  const byArn = Object.fromEntries(FUNCTIONS.map((fn) => [stack.functions[fn].arn, fn]));
  const functionOf: Record<string, FunctionName> = {};
  for (const r of routes) {
    const integration = integrations.find((i) => `integrations/${i.IntegrationId as string}` === r.Target);
    functionOf[r.RouteKey as string] = byArn[integration?.IntegrationUri ?? ''] as FunctionName;
  }
  const routeKeys = Object.keys(functionOf);
  const exercised = new Set<string>();
  return {
    routeKeys,
    functionOf,
    exercised,
    send: async (request) => {
      const event = httpApiEvent({ accountId: ACCOUNT_ID, apiId: ApiId, region: REGION }, routeKeys, request);
      exercised.add(event.routeKey);
      const functionName = functionOf[event.routeKey];
      if (!functionName) throw new Error(`no route for ${request.method} ${request.path}`);
      const run = await stack.functions[functionName].runtime.invoke<APIGatewayProxyStructuredResultV2>(event);
      // An integration error: API Gateway answers 500 {"message":"Internal Server Error"}.
      if (!run.ok)
        return { routeKey: event.routeKey, functionName, status: 500, headers: {}, body: JSON.stringify(run.error), json: run.error };
      const r = run.response as APIGatewayProxyStructuredResultV2;
      const body = r.isBase64Encoded ? Buffer.from(r.body ?? '', 'base64').toString('utf8') : (r.body ?? '');
      const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      return { routeKey: event.routeKey, functionName, status: r.statusCode ?? 200, headers, body, json };
    },
  };
}

/** The template's event source mapping for the function: its queue and batch size. */
function mappingOf(stack: MotoStack, fn: FunctionName): { queueLogicalId: string; batchSize: number } {
  for (const r of Object.values(stack.template.Resources)) {
    if (r.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const target = (r.Properties.FunctionName as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    if (target !== lambdaLogicalId(fn)) continue;
    const source = (r.Properties.EventSourceArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
    return { queueLogicalId: source, batchSize: r.Properties.BatchSize as number };
  }
  throw new Error(`${fn} has no event source mapping`);
}

export interface PollResult {
  invocations: Invocation<SQSBatchResponse>[];
  messages: number;
  failed: number;
}

/** Polls the function's queue as its event source mapping does, until a receive comes back empty. */
export async function pollQueue(stack: MotoStack, fn: FunctionName, maxRounds = 10): Promise<PollResult> {
  const { queueLogicalId, batchSize } = mappingOf(stack, fn);
  const name = (stack.ctx.physical[queueLogicalId] as string).split('/').pop() as string;
  const QueueUrl = `${stack.proxy.url}/${ACCOUNT_ID}/${name}`;
  const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT_ID}:${name}`;
  const sqs = new SQSClient({ endpoint: stack.proxy.url, region: REGION, credentials: stack.functions[fn].credentials, maxAttempts: 1 });
  const result: PollResult = { invocations: [], messages: 0, failed: 0 };
  try {
    for (let round = 0; round < maxRounds; round += 1) {
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: batchSize,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      result.messages += messages.length;
      const run = await stack.functions[fn].runtime.invoke<SQSBatchResponse>(sqsEvent(queueArn, REGION, messages));
      result.invocations.push(run);
      const failedIds = new Set(
        run.ok ? (run.response?.batchItemFailures ?? []).map((f) => f.itemIdentifier) : messages.map((m) => m.MessageId),
      );
      result.failed += failedIds.size;
      const done = messages.filter((m) => !failedIds.has(m.MessageId));
      if (done.length > 0)
        await sqs.send(
          new DeleteMessageBatchCommand({ QueueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
        );
    }
  } finally {
    sqs.destroy();
  }
  return result;
}

/** The function's rule firing on its schedule. */
export function fireSchedule(stack: MotoStack, fn: FunctionName): Promise<Invocation<unknown>> {
  const ruleId = Object.keys(stack.template.Resources).find((id) =>
    id.startsWith(`${lambdaLogicalId(fn).replace(/LambdaFunction$/, '')}EventsRuleSchedule`),
  );
  const physical = stack.ctx.physical[ruleId ?? ''];
  if (!physical) throw new Error(`${fn} has no schedule`);
  const ruleArn = physical.startsWith('arn:') ? physical : `arn:aws:events:${REGION}:${ACCOUNT_ID}:rule/${physical}`;
  return stack.functions[fn].runtime.invoke(scheduledEvent(ruleArn, ACCOUNT_ID, REGION));
}
