// The checks S3 makes on a browser-based upload (POST Object with a form): the policy's signature (SigV4, or
// SigV2 for old forms), its expiration, every condition on the form's fields and the file's size, and that no
// field escapes the conditions. Pure: the local S3 parses the form and answers the refusal as S3's XML error.
import crypto from 'node:crypto';
import type { S3Refusal } from './object-keys';

export interface PostedForm {
  /** The bucket the form was posted to (from the URL). */
  bucket: string;
  /** The form's fields before the file, in order, as posted (names are case-insensitive). */
  fields: readonly (readonly [string, string])[];
  /** The file's size in bytes; undefined while it is not read yet (its size is then checked as it streams). */
  fileSize?: number;
}

export interface PolicyCheckContext {
  now: Date;
  /** The secret of an access key the local S3 holds, undefined for any other key. */
  secretFor(accessKeyId: string): string | undefined;
}

type Condition =
  | { kind: 'eq' | 'starts-with'; field: string; value: string; source: unknown }
  | { kind: 'content-length-range'; min: number; max: number };

/** Fields that never need a condition (S3: the signature, the policy, the file, and x-ignore-* fields). */
const UNCONDITIONED = new Set(['policy', 'x-amz-signature', 'file', 'awsaccesskeyid', 'signature']);

/** The refusal S3 would answer for this form, or undefined when S3 would store its file. */
export function postPolicyRefusal(form: PostedForm, ctx: PolicyCheckContext): S3Refusal | undefined {
  const fields = new Map<string, string>();
  for (const [name, value] of form.fields) {
    // One value a field: the policy is checked against one and s3rver would store under another (it keeps the last).
    if (fields.has(name.toLowerCase())) {
      return {
        code: 'InvalidArgument',
        message: `POST form fields must be unique: '${name}' appears more than once.`,
        detail: { ArgumentName: name, ArgumentValue: value },
      };
    }
    fields.set(name.toLowerCase(), value);
  }

  const policy = fields.get('policy');
  if (policy === undefined) {
    // No policy: an anonymous upload, which a bucket that is not publicly writable refuses.
    return { code: 'AccessDenied', message: 'Access Denied', detail: {} };
  }
  const signed = signatureRefusal(policy, fields, ctx);
  if (signed) return signed;

  const document = parsePolicy(policy);
  if ('refusal' in document) return document.refusal;
  if (ctx.now.getTime() > document.expiration.getTime()) return denied('Policy expired.');

  for (const condition of document.conditions) {
    if (condition.kind === 'content-length-range') continue;
    const actual = condition.field === 'bucket' ? form.bucket : (fields.get(condition.field) ?? '');
    const holds = condition.kind === 'eq' ? actual === condition.value : actual.startsWith(condition.value);
    if (!holds) {
      const [, name, value] = conditionTriple(condition);
      return denied(`Policy Condition failed: ["${condition.kind}", "${name}", ${JSON.stringify(value)}]`);
    }
  }

  const conditioned = new Set(document.conditions.flatMap((c) => (c.kind === 'content-length-range' ? [] : [c.field])));
  const extra = [...fields.keys()].filter((name) => !UNCONDITIONED.has(name) && !name.startsWith('x-ignore-') && !conditioned.has(name));
  if (extra.length > 0) return denied(`Extra input fields: ${extra.join(', ')}`);

  if (form.fileSize === undefined) return undefined;
  return sizeRefusal(document.conditions, form.fileSize);
}

/** The content-length-range a valid form's policy sets (the narrowest), undefined when it sets none. */
export function policySizeRange(fields: readonly (readonly [string, string])[]): { min: number; max: number } | undefined {
  const policy = fields.find(([name]) => name.toLowerCase() === 'policy')?.[1];
  const document = policy === undefined ? undefined : parsePolicy(policy);
  if (!document || 'refusal' in document) return undefined;
  let range: { min: number; max: number } | undefined;
  for (const c of document.conditions) {
    if (c.kind !== 'content-length-range') continue;
    range = { min: Math.max(range?.min ?? 0, c.min), max: Math.min(range?.max ?? Infinity, c.max) };
  }
  return range;
}

/** EntityTooLarge or EntityTooSmall, as S3 answers a file outside the policy's content-length-range. */
export function sizeRefusal(conditions: readonly Condition[] | { min: number; max: number }, fileSize: number): S3Refusal | undefined {
  const ranges = Array.isArray(conditions) ? conditions.filter((c) => c.kind === 'content-length-range') : [conditions];
  for (const condition of ranges as { min: number; max: number }[]) {
    if (fileSize > condition.max) {
      return {
        code: 'EntityTooLarge',
        message: 'Your proposed upload exceeds the maximum allowed size',
        detail: { ProposedSize: fileSize, MaxSizeAllowed: condition.max },
      };
    }
    if (fileSize < condition.min) {
      return {
        code: 'EntityTooSmall',
        message: 'Your proposed upload is smaller than the minimum allowed size',
        detail: { ProposedSize: fileSize, MinSizeAllowed: condition.min },
      };
    }
  }
  return undefined;
}

const denied = (why: string): S3Refusal => ({ code: 'AccessDenied', message: `Invalid according to Policy: ${why}`, detail: {} });

const missingField = (name: string): S3Refusal => ({
  code: 'InvalidArgument',
  message: `Bucket POST must contain a field named '${name}'.  If it is specified, please check the order of the fields.`,
  detail: { ArgumentName: name, ArgumentValue: '' },
});

function signatureRefusal(policy: string, fields: Map<string, string>, ctx: PolicyCheckContext): S3Refusal | undefined {
  let accessKeyId: string;
  let expected: (secret: string) => string;
  let provided: string | undefined;
  const algorithm = fields.get('x-amz-algorithm');
  if (algorithm !== undefined) {
    if (algorithm !== 'AWS4-HMAC-SHA256') {
      return {
        code: 'InvalidArgument',
        message: 'The algorithm is not supported',
        detail: { ArgumentName: 'x-amz-algorithm', ArgumentValue: algorithm },
      };
    }
    const credential = fields.get('x-amz-credential');
    if (credential === undefined) return missingField('X-Amz-Credential');
    provided = fields.get('x-amz-signature');
    if (provided === undefined) return missingField('X-Amz-Signature');
    const [id = '', date = '', region = '', service = '', terminator = ''] = credential.split('/');
    if (!/^\d{8}$/.test(date) || !region || service !== 's3' || terminator !== 'aws4_request') {
      return {
        code: 'InvalidArgument',
        message: 'Invalid credential',
        detail: { ArgumentName: 'x-amz-credential', ArgumentValue: credential },
      };
    }
    accessKeyId = id;
    expected = (secret) => hmac(sigV4SigningKey(secret, date, region, 's3'), policy).toString('hex');
  } else {
    const id = fields.get('awsaccesskeyid');
    if (id === undefined) return missingField('AWSAccessKeyId');
    provided = fields.get('signature');
    if (provided === undefined) return missingField('Signature');
    accessKeyId = id;
    expected = (secret) => crypto.createHmac('sha1', secret).update(policy, 'utf8').digest('base64');
  }
  const secret = ctx.secretFor(accessKeyId);
  if (secret === undefined) {
    return {
      code: 'InvalidAccessKeyId',
      message: 'The AWS Access Key Id you provided does not exist in our records.',
      detail: { AWSAccessKeyId: accessKeyId },
    };
  }
  if (expected(secret) !== provided) {
    return {
      code: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      detail: { AWSAccessKeyId: accessKeyId, StringToSign: policy },
    };
  }
  return undefined;
}

const hmac = (key: crypto.BinaryLike, data: string): Buffer => crypto.createHmac('sha256', key).update(data, 'utf8').digest();

/** SigV4's derived key: HMAC chain over date, region, service and "aws4_request". */
export function sigV4SigningKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
}

function parsePolicy(policy: string): { expiration: Date; conditions: Condition[] } | { refusal: S3Refusal } {
  const invalid = (why: string) => ({ refusal: { code: 'InvalidPolicyDocument', message: `Invalid Policy: ${why}`, detail: {} } });
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(policy, 'base64').toString('utf8'));
  } catch {
    return invalid('Invalid JSON.');
  }
  if (typeof document !== 'object' || document === null) return invalid('Invalid JSON.');
  const { expiration, conditions } = document as { expiration?: unknown; conditions?: unknown };
  if (typeof expiration !== 'string') return invalid('Policy missing expiration.');
  const expiresAt = new Date(expiration);
  if (Number.isNaN(expiresAt.getTime())) return invalid(`Invalid 'expiration' value: '${expiration}'`);
  if (!Array.isArray(conditions)) return invalid('Policy missing conditions.');
  const parsed: Condition[] = [];
  for (const source of conditions) {
    const condition = parseCondition(source);
    if (!condition) return invalid(`Invalid Condition: ${JSON.stringify(source)}`);
    parsed.push(...condition);
  }
  return { expiration: expiresAt, conditions: parsed };
}

/**
 * One policy condition as S3 writes them: {"field": "value"}, ["eq"|"starts-with", "$field", "value"] or
 * ["content-length-range", min, max].
 */
function parseCondition(source: unknown): Condition[] | undefined {
  if (Array.isArray(source)) {
    const [op, a, b] = source as unknown[];
    if (source.length !== 3 || typeof op !== 'string') return undefined;
    const kind = op.toLowerCase();
    if (kind === 'content-length-range') {
      const min = Number(a);
      const max = Number(b);
      if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) return undefined;
      return [{ kind, min, max }];
    }
    if ((kind === 'eq' || kind === 'starts-with') && typeof a === 'string' && a.startsWith('$') && typeof b === 'string') {
      return [{ kind, field: a.slice(1).toLowerCase(), value: b, source }];
    }
    return undefined;
  }
  if (typeof source === 'object' && source !== null) {
    const entries = Object.entries(source as Record<string, unknown>);
    if (entries.length === 0 || entries.some(([, v]) => typeof v !== 'string')) return undefined;
    return entries.map(([field, value]) => ({
      kind: 'eq',
      field: field.toLowerCase(),
      value: value as string,
      source: { [field]: value },
    }));
  }
  return undefined;
}

/** A field condition as S3 quotes it in its error message: [kind, "$Field", value] with the policy's spelling. */
function conditionTriple(condition: Extract<Condition, { field: string }>): [string, string, string] {
  const { source } = condition;
  if (Array.isArray(source)) return [condition.kind, String(source[1]), condition.value];
  const [name = condition.field] = Object.keys(source as object);
  return [condition.kind, `$${name}`, condition.value];
}
