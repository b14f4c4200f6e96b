// The local DynamoDB's IAM and the limits dynalite lets through: in front of dynalite's request listener, a request
// signed with a function's key (local/iam/iam.ts) is answered AccessDeniedException (400, DynamoDB's JSON) unless that
// function's role allows every action it is authorized as, on the ARNs DynamoDB names: the table, or
// table/NAME/index/INDEX for a Query or Scan of an index; per table for the batch calls; per item (PutItem,
// UpdateItem, DeleteItem, ConditionCheckItem, GetItem) for a transaction, which has no action of its own. And a
// transaction of more than 100 items or 4 MB is refused as DynamoDB refuses it (dynalite has no transactions and
// answers UnknownOperationException; DynamoDB Local checks them itself). Other keys (the operator's, the stack's own
// clients) keep dynalite's: no IAM.

import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { IamRequest } from '../iam/evaluate';
import { functionOfAccessKey, type LocalIam } from '../iam/iam';

type Body = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** DynamoDB's limits on one transaction. */
export const TRANSACTION_LIMITS = { maxItems: 100, maxBytes: 4 * 1024 * 1024 } as const;

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Get: 'dynamodb:GetItem',
};

/** What IAM authorizes one DynamoDB request as: each (action, resource) it must allow. */
export function dynamoIamRequests(operation: string, body: Body, iam: Pick<LocalIam, 'tableArnOf'>): IamRequest[] {
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys((body.RequestItems ?? {}) as Body).map((table) => ({
      action: `dynamodb:${operation}`,
      resource: iam.tableArnOf(table),
    }));
  }
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    return ((body.TransactItems ?? []) as Body[]).flatMap((item) =>
      Object.entries(item).flatMap(([kind, op]) => {
        const table = str((op as Body | undefined)?.TableName);
        const action = TRANSACT_ACTIONS[kind];
        return action && table ? [{ action, resource: iam.tableArnOf(table) }] : [];
      }),
    );
  }
  const table = str(body.TableName);
  if (!table) return [{ action: `dynamodb:${operation}`, resource: '*' }];
  const index = operation === 'Query' || operation === 'Scan' ? str(body.IndexName) : undefined;
  return [{ action: `dynamodb:${operation}`, resource: iam.tableArnOf(table, index) }];
}

interface DynamoError {
  type: string;
  message: string;
}

/** DynamoDB's answer to a transaction beyond its limits, or undefined. */
export function transactionLimitError(operation: string, body: Body, bodyBytes: number): DynamoError | undefined {
  if (operation !== 'TransactWriteItems' && operation !== 'TransactGetItems') return undefined;
  const items = Array.isArray(body.TransactItems) ? body.TransactItems.length : 0;
  if (items > TRANSACTION_LIMITS.maxItems) {
    return {
      type: 'com.amazon.coral.validate#ValidationException',
      message: `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${TRANSACTION_LIMITS.maxItems}`,
    };
  }
  if (bodyBytes > TRANSACTION_LIMITS.maxBytes) {
    return { type: 'com.amazon.coral.validate#ValidationException', message: 'Transaction request cannot be larger than 4 MB' };
  }
  return undefined;
}

const accessKeyOf = (authorization: string | undefined): string | undefined => /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];

function answer(res: ServerResponse, status: number, error: DynamoError): void {
  const body = JSON.stringify({ __type: error.type, Message: error.message });
  res.writeHead(status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(body),
    'x-amzn-RequestId': 'local',
  });
  res.end(body);
}

/** The request as dynalite reads it (headers, method, 'data' then 'end'), its body already read here. */
function replayed(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new EventEmitter() as IncomingMessage;
  Object.assign(copy, { headers: req.headers, method: req.method, url: req.url, httpVersion: req.httpVersion, socket: req.socket });
  setImmediate(() => {
    if (body.length > 0) copy.emit('data', body);
    copy.emit('end');
  });
  return copy;
}

/** The refusal of one request (IAM first, as DynamoDB authorizes before it validates), or undefined. */
async function refusalOf(iam: LocalIam, fn: string | undefined, operation: string, raw: Buffer): Promise<DynamoError | undefined> {
  let body: Body;
  try {
    body = JSON.parse(raw.toString('utf8') || '{}') as Body;
  } catch {
    return undefined; // dynalite answers a body that is not JSON with its own SerializationException.
  }
  if (fn !== undefined) {
    const refusal = await iam.refusal(fn, dynamoIamRequests(operation, body, iam));
    if (refusal) return { type: 'com.amazon.coral.service#AccessDeniedException', message: refusal.message };
  }
  return transactionLimitError(operation, body, raw.length);
}

/** Puts IAM and the transaction limits in front of dynalite's own request listener. */
export function guardDynalite(server: Server, iam: LocalIam): void {
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  const inner = (req: IncomingMessage, res: ServerResponse) => {
    for (const listener of listeners) listener(req, res);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const target = str(req.headers['x-amz-target']);
    const operation = target?.split('.')[1];
    if (req.method !== 'POST' || !operation) return inner(req, res);
    const fn = functionOfAccessKey(accessKeyOf(str(req.headers.authorization)));
    if (fn === undefined && !operation.startsWith('Transact')) return inner(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      refusalOf(iam, fn, operation, raw)
        .then((error) => (error ? answer(res, 400, error) : inner(replayed(req, raw), res)))
        .catch((err: unknown) => answer(res, 500, { type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(err) }));
    });
  });
}
