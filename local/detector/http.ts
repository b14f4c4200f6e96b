// The detector's answers: JSON, and AWS errors in Rekognition's JSON 1.1 shape.
import type { ServerResponse } from 'node:http';
import type { DetectorError } from './errors';

export const JSON_11 = 'application/x-amz-json-1.1';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': headers['content-type'] ?? 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendAwsError(res: ServerResponse, err: DetectorError, requestId: string): void {
  sendJson(
    res,
    err.status,
    { __type: err.type, Code: err.type, Logref: requestId, Message: err.message },
    { 'content-type': JSON_11, 'x-amzn-requestid': requestId, 'x-amzn-errortype': err.type },
  );
}
