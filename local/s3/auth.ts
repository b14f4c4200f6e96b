// Who may use the local S3: S3 answers a bucket that is not public only to signed requests, and so does the local one.
// Every request must carry a valid AWS Signature Version 4, in its Authorization header (the SDK's requests, the
// stack's own clients) or in its query (presigned URLs: the web app's image and thumbnail links, exports), and that
// signature is computed again here with the secret of its access key and compared; anything else answers AccessDenied.
// The exceptions S3 makes too: browser-based uploads (a POST form to the bucket, authorized by its signed policy, which
// postFormGuard checks), and CORS preflights (OPTIONS, which a browser sends without credentials). SigV2 (header or
// query) is left to s3rver, which checks those signatures itself. Pure except for the clock it is given.
import crypto from 'node:crypto';
import type { S3Refusal } from './object-keys';
import { sigV4SigningKey } from './post-policy';

export interface SignedRequest {
  method: string;
  /** The request target as received: the raw (still percent-encoded) path and query. */
  url: string;
  /** Node's lower-cased headers. */
  headers: Record<string, string | string[] | undefined>;
}

export interface AuthCheckContext {
  now: Date;
  /** The secret of an access key the local S3 holds, undefined for any other key. */
  secretFor(accessKeyId: string): string | undefined;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** S3 refuses a header-signed request whose time is further than this from its own clock. */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** The longest a presigned URL may live (7 days). */
const MAX_EXPIRES_S = 7 * 24 * 3600;

const accessDenied = (message = 'Access Denied'): S3Refusal => ({ code: 'AccessDenied', message, detail: {} });

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ percent-encoded, in upper-case hex. */
export const sigV4Escape = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const decode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};

/** The query's parameters, decoded, in order (a parameter without '=' has the empty value). */
export function queryParameters(rawQuery: string): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq === -1 ? part : part.slice(0, eq));
    const value = decode(eq === -1 ? '' : part.slice(eq + 1));
    if (name === undefined || value === undefined) return undefined;
    out.push([name, value]);
  }
  return out;
}

/** The canonical query string: every parameter but the signature, encoded, sorted by name then value. */
function canonicalQuery(parameters: readonly [string, string][]): string {
  return parameters
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [sigV4Escape(name), sigV4Escape(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const headerValue = (headers: SignedRequest['headers'], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

interface Credential {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
}

function parseCredential(credential: string): Credential | undefined {
  const [accessKeyId = '', date = '', region = '', service = '', terminator = '', ...rest] = credential.split('/');
  if (!accessKeyId || !/^\d{8}$/.test(date) || !region || service !== 's3' || terminator !== 'aws4_request' || rest.length > 0)
    return undefined;
  return { accessKeyId, date, region, service };
}

/** 20260101T120000Z to epoch ms. */
function parseAmzDate(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

/** What a SigV4 signature signs, read from the request as received. */
interface SignatureInput {
  credential: Credential;
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  payloadHash: string;
  parameters: [string, string][];
}

/**
 * The refusal S3 would answer, or undefined when the request may go on: to s3rver's routes, or, for a POST form or a
 * SigV2 request, to the checks that handle those.
 */
export function authRefusal(req: SignedRequest, ctx: AuthCheckContext): S3Refusal | undefined {
  if (req.method === 'OPTIONS') return undefined;
  const queryAt = req.url.indexOf('?');
  const rawPath = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
  const parameters = queryParameters(queryAt === -1 ? '' : req.url.slice(queryAt + 1));
  if (!parameters) return { code: 'InvalidArgument', message: 'The query string is not valid percent-encoding.', detail: {} };
  const names = new Set(parameters.map(([name]) => name));
  const authorization = headerValue(req.headers, 'authorization');

  if (authorization === undefined && !names.has('X-Amz-Algorithm')) {
    if (names.has('Signature') && names.has('AWSAccessKeyId')) return undefined; // SigV2 presigned URL: s3rver checks it.
    if (isFormPost(req.method, rawPath, req.headers, names)) return undefined; // postFormGuard checks its policy.
    return accessDenied();
  }
  if (authorization !== undefined && names.has('X-Amz-Algorithm')) {
    return { code: 'InvalidArgument', message: 'Only one auth mechanism allowed', detail: { ArgumentName: 'Authorization' } };
  }
  if (authorization !== undefined && /^AWS /.test(authorization)) return undefined; // SigV2 header: s3rver checks it.

  const input = authorization !== undefined ? fromHeader(authorization, req.headers, parameters, ctx.now) : fromQuery(parameters, ctx.now);
  if ('refusal' in input) return input.refusal;

  const secret = ctx.secretFor(input.credential.accessKeyId);
  if (secret === undefined) {
    return {
      code: 'InvalidAccessKeyId',
      message: 'The AWS Access Key Id you provided does not exist in our records.',
      detail: { AWSAccessKeyId: input.credential.accessKeyId },
    };
  }
  const canonicalHeaders: string[] = [];
  for (const name of input.signedHeaders) {
    const value = headerValue(req.headers, name);
    if (value === undefined) return accessDenied(`There were headers present in the request which were not signed: ${name}`);
    canonicalHeaders.push(`${name}:${value.trim().replace(/\s+/g, ' ')}`);
  }
  const canonicalRequest = [
    req.method,
    rawPath,
    canonicalQuery(input.parameters),
    ...canonicalHeaders,
    '',
    input.signedHeaders.join(';'),
    input.payloadHash,
  ].join('\n');
  const { date, region, service } = input.credential;
  const stringToSign = [ALGORITHM, input.amzDate, `${date}/${region}/${service}/aws4_request`, sha256Hex(canonicalRequest)].join('\n');
  const expected = crypto
    .createHmac('sha256', sigV4SigningKey(secret, date, region, service))
    .update(stringToSign, 'utf8')
    .digest('hex');
  if (!timingSafeEqualText(expected, input.signature)) {
    return {
      code: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      detail: { AWSAccessKeyId: input.credential.accessKeyId, StringToSign: stringToSign, CanonicalRequest: canonicalRequest },
    };
  }
  return undefined;
}

/** A browser-based upload: a multipart/form-data POST to the bucket itself (not ?delete or another sub-resource). */
function isFormPost(method: string, rawPath: string, headers: SignedRequest['headers'], names: Set<string>): boolean {
  const contentType = headerValue(headers, 'content-type') ?? '';
  return method === 'POST' && /^\/[^/]+\/?$/.test(rawPath) && names.size === 0 && /^multipart\/form-data\b/i.test(contentType);
}

function fromHeader(
  authorization: string,
  headers: SignedRequest['headers'],
  parameters: [string, string][],
  now: Date,
): SignatureInput | { refusal: S3Refusal } {
  const malformed = { refusal: { code: 'AuthorizationHeaderMalformed', message: 'The authorization header is malformed.', detail: {} } };
  if (!authorization.startsWith(`${ALGORITHM} `)) return malformed;
  const fields = new Map<string, string>();
  for (const part of authorization.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq !== -1) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = parseCredential(fields.get('Credential') ?? '');
  const signedHeaders = (fields.get('SignedHeaders') ?? '').split(';').filter(Boolean);
  const signature = fields.get('Signature');
  if (!credential || signedHeaders.length === 0 || !signature || !signedHeaders.includes('host')) return malformed;
  const amzDate = headerValue(headers, 'x-amz-date');
  const at = amzDate === undefined ? undefined : parseAmzDate(amzDate);
  if (amzDate === undefined || at === undefined || amzDate.slice(0, 8) !== credential.date) {
    return { refusal: accessDenied('AWS authentication requires a valid Date or x-amz-date header') };
  }
  if (Math.abs(now.getTime() - at) > MAX_SKEW_MS) {
    return {
      refusal: {
        code: 'RequestTimeTooSkewed',
        message: 'The difference between the request time and the current time is too large.',
        detail: { RequestTime: amzDate, ServerTime: now.toISOString(), MaxAllowedSkewMilliseconds: MAX_SKEW_MS },
      },
    };
  }
  const payloadHash = headerValue(headers, 'x-amz-content-sha256');
  if (payloadHash === undefined) {
    return { refusal: { code: 'InvalidRequest', message: 'Missing required header for this request: x-amz-content-sha256', detail: {} } };
  }
  return { credential, amzDate, signedHeaders, signature, payloadHash, parameters };
}

function fromQuery(parameters: [string, string][], now: Date): SignatureInput | { refusal: S3Refusal } {
  const get = (name: string) => parameters.find(([n]) => n === name)?.[1];
  const queryError = (message: string) => ({ refusal: { code: 'AuthorizationQueryParametersError', message, detail: {} } });
  if (get('X-Amz-Algorithm') !== ALGORITHM) return queryError('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
  const credential = parseCredential(get('X-Amz-Credential') ?? '');
  const amzDate = get('X-Amz-Date') ?? '';
  const at = parseAmzDate(amzDate);
  const expires = Number(get('X-Amz-Expires'));
  const signedHeaders = (get('X-Amz-SignedHeaders') ?? '').split(';').filter(Boolean);
  const signature = get('X-Amz-Signature');
  if (!credential || at === undefined || amzDate.slice(0, 8) !== credential.date || !signature || !signedHeaders.includes('host')) {
    return queryError(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    );
  }
  if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_S) {
    return queryError(`X-Amz-Expires must be a whole number of seconds from 1 to ${MAX_EXPIRES_S}`);
  }
  if (now.getTime() > at + expires * 1000) return { refusal: accessDenied('Request has expired') };
  if (at - now.getTime() > MAX_SKEW_MS) return { refusal: accessDenied('Request is not valid yet') };
  return { credential, amzDate, signedHeaders, signature, payloadHash: get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD', parameters };
}

const sha256Hex = (text: string): string => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

function timingSafeEqualText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/** The access key a SigV4 request (header or presigned URL) names, undefined for any other request. */
export function signedAccessKeyId(req: SignedRequest): string | undefined {
  const authorization = headerValue(req.headers, 'authorization');
  if (authorization !== undefined) return /Credential=([^/,\s]+)\//.exec(authorization)?.[1];
  const queryAt = req.url.indexOf('?');
  const credential = queryParameters(queryAt === -1 ? '' : req.url.slice(queryAt + 1))?.find(([name]) => name === 'X-Amz-Credential')?.[1];
  return credential?.split('/')[0];
}

/** The access key a SigV2 request (header or presigned URL) names, undefined for any other request. */
export function sigV2AccessKeyId(req: SignedRequest): string | undefined {
  const authorization = headerValue(req.headers, 'authorization');
  if (authorization !== undefined) return /^AWS ([^:\s]+):/.exec(authorization)?.[1];
  const queryAt = req.url.indexOf('?');
  return queryParameters(queryAt === -1 ? '' : req.url.slice(queryAt + 1))?.find(([name]) => name === 'AWSAccessKeyId')?.[1];
}
