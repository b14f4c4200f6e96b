// A recording proxy in front of moto (and of the offline detector, for Rekognition): every request a function sends
// is recorded under the function its access key belongs to, with the IAM actions and resources it is authorized as,
// then forwarded unchanged. Moto enforces no IAM for these calls: the record is what the roles are checked against.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Account, type AwsRequest, describeRequest } from './authorizations';
import type { Authorization, Verdict } from './role-check';

export interface RecordedCall {
  functionName: string;
  service: string;
  operation: string;
  authorizations: Authorization[];
  status: number;
  /** The authorizations the caller's role does not allow (the proxy then answered AccessDenied, as AWS would). */
  denied: (Authorization & { result: string })[];
}

export type Check = (functionName: string, call: Authorization) => Promise<Verdict>;

export interface RecordingProxy {
  url: string;
  calls: RecordedCall[];
  close(): Promise<void>;
}

/** The access key and service of a SigV4 request: from its Authorization header, or a presigned URL's query. */
export function credentialScope(req: {
  url?: string;
  headers: IncomingMessage['headers'];
}): { accessKeyId: string; service: string } | undefined {
  const auth = req.headers.authorization;
  const fromHeader = typeof auth === 'string' ? /Credential=([^/]+)\/[^/]+\/[^/]+\/([^/]+)\//.exec(auth) : null;
  if (fromHeader) return { accessKeyId: fromHeader[1] as string, service: fromHeader[2] as string };
  const credential = new URL(req.url ?? '/', 'http://x').searchParams.get('X-Amz-Credential');
  const parts = credential?.split('/');
  return parts && parts.length === 5 ? { accessKeyId: parts[0] as string, service: parts[3] as string } : undefined;
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });

function forward(target: string, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<number> {
  const url = new URL(req.url ?? '/', target);
  return new Promise((resolve, reject) => {
    const out = httpRequest(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('end', () => resolve(answer.statusCode ?? 502));
    });
    out.on('error', reject);
    out.end(body);
  });
}

/** The refusal each service sends for an action the caller's role does not allow. */
function refuse(res: ServerResponse, service: string, functionName: string, denied: Authorization): void {
  const message = `User: ${functionName}'s role is not authorized to perform: ${denied.action} on resource: ${denied.resource} because no identity-based policy allows the ${denied.action} action`;
  if (service === 's3') {
    res.writeHead(403, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`);
    return;
  }
  res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': 'AccessDenied;Sender' });
  res.end(JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }));
}

/**
 * Starts the proxy. `keys` maps each function's access key to its name; `targets` maps a service to where it is
 * answered (moto for all but Rekognition).
 */
export async function startRecordingProxy(
  account: Account,
  keys: Record<string, string>,
  targets: { default: string; rekognition: string },
  check: Check,
): Promise<RecordingProxy> {
  const calls: RecordedCall[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const scope = credentialScope(req);
    const service = scope?.service ?? 'unsigned';
    const functionName = keys[scope?.accessKeyId ?? ''];
    const target = service === 'rekognition' ? targets.rekognition : targets.default;
    if (!functionName) {
      await forward(target, req, body, res);
      return;
    }
    const request: AwsRequest = { service, method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
    const described = describeRequest(account, request);
    const denied: RecordedCall['denied'] = [];
    for (const a of described.authorizations) {
      const verdict = await check(functionName, a);
      if (!verdict.allowed) denied.push({ ...a, result: verdict.result });
    }
    const call: RecordedCall = { functionName, service, ...described, status: 0, denied };
    calls.push(call);
    if (denied.length > 0) {
      refuse(res, service, functionName, denied[0] as Authorization);
      call.status = service === 's3' ? 403 : 400;
      return;
    }
    call.status = await forward(target, req, body, res);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502);
      process.stderr.write(`recording proxy: ${(err as Error).stack ?? String(err)}\n`);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
