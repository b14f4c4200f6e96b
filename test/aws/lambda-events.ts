// The events Lambda hands the functions, built as each AWS source builds them: API Gateway HTTP API payload 2.0 events
// from the template's route keys (the route API Gateway would match, its path parameters filled as API Gateway fills
// them: a {batchId} segment takes "abc:close" whole), SQS batches as Lambda's event source mapping delivers the received
// messages, and EventBridge's scheduled event.

import { randomUUID } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, EventBridgeEvent, SQSEvent, SQSRecord } from 'aws-lambda';

export interface HttpRequest {
  method: string;
  /** Path and query string, as the client sent them. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface MatchedRoute {
  routeKey: string;
  pathParameters?: Record<string, string>;
}

/** The route API Gateway matches: the most specific path first (literal segments over variables), `$default` last. */
export function matchRoute(routeKeys: readonly string[], method: string, rawPath: string): MatchedRoute {
  const segments = rawPath.split('/').slice(1);
  let best: { key: string; params: Record<string, string>; literals: number[] } | undefined;
  for (const key of routeKeys) {
    if (key === '$default') continue;
    const [routeMethod, routePath] = key.split(' ') as [string, string];
    if (routeMethod !== method && routeMethod !== 'ANY') continue;
    const parts = routePath.split('/').slice(1);
    const params: Record<string, string> = {};
    const literals: number[] = [];
    let matched = parts.length === segments.length || parts.at(-1)?.endsWith('+}') === true;
    for (let i = 0; matched && i < parts.length; i += 1) {
      const part = parts[i] as string;
      const greedy = /^\{(.+)\+\}$/.exec(part);
      const variable = /^\{(.+)\}$/.exec(part);
      if (greedy) params[greedy[1] as string] = decodeURIComponent(segments.slice(i).join('/'));
      else if (variable && segments[i]) params[variable[1] as string] = decodeURIComponent(segments[i] as string);
      else if (part === segments[i]) literals.push(i);
      else matched = false;
    }
    if (!matched) continue;
    // API Gateway prefers the route whose literal segments come first and are most.
    const better = !best || compareLiterals(literals, best.literals) > 0;
    if (better) best = { key, params, literals };
  }
  if (!best) return { routeKey: '$default' };
  return { routeKey: best.key, ...(Object.keys(best.params).length ? { pathParameters: best.params } : {}) };
}

function compareLiterals(a: number[], b: number[]): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return (b[i] as number) - (a[i] as number);
  return 0;
}

export interface ApiContext {
  accountId: string;
  apiId: string;
  region: string;
}

/** The payload 2.0 event API Gateway sends the integration for `request`. */
export function httpApiEvent(ctx: ApiContext, routeKeys: readonly string[], request: HttpRequest): APIGatewayProxyEventV2 {
  const [rawPath, rawQueryString = ''] = request.path.split('?') as [string, string?];
  const matched = matchRoute(routeKeys, request.method, rawPath);
  const domainName = `${ctx.apiId}.execute-api.${ctx.region}.amazonaws.com`;
  const now = Date.now();
  const headers: Record<string, string> = {
    accept: '*/*',
    host: domainName,
    'user-agent': 'icecat-artifact-test',
    'x-amzn-trace-id': `Root=1-${Math.floor(now / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    'x-forwarded-for': '198.51.100.7',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
    ...Object.fromEntries(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
  };
  if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(rawQueryString)) query[k] = k in query ? `${query[k] as string},${v}` : v;
  return {
    version: '2.0',
    routeKey: matched.routeKey,
    rawPath,
    rawQueryString,
    headers,
    ...(rawQueryString ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: ctx.accountId,
      apiId: ctx.apiId,
      domainName,
      domainPrefix: ctx.apiId,
      http: {
        method: request.method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '198.51.100.7',
        userAgent: headers['user-agent'] as string,
      },
      requestId: randomUUID().slice(0, 16),
      routeKey: matched.routeKey,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(matched.pathParameters ? { pathParameters: matched.pathParameters } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
    isBase64Encoded: false,
  };
}

const messageAttributes = (m: Message): SQSRecord['messageAttributes'] =>
  Object.fromEntries(
    Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [
      k,
      { dataType: v.DataType as string, stringValue: v.StringValue, stringListValues: [], binaryListValues: [] },
    ]),
  );

/** The batch Lambda's event source mapping hands the function for the messages it received. */
export function sqsEvent(queueArn: string, region: string, messages: Message[]): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId as string,
      receiptHandle: m.ReceiptHandle as string,
      body: m.Body as string,
      attributes: m.Attributes as unknown as SQSRecord['attributes'],
      messageAttributes: messageAttributes(m),
      md5OfBody: m.MD5OfBody as string,
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: region,
    })),
  };
}

/** What an EventBridge rule's schedule sends its target. */
export function scheduledEvent(
  ruleArn: string,
  accountId: string,
  region: string,
): EventBridgeEvent<'Scheduled Event', Record<string, never>> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: accountId,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [ruleArn],
    detail: {},
  };
}
