// Which bucket names and object keys the local S3 can store. s3rver keeps an object as files named after its key:
// each '/'-separated segment but the last is a directory, and the last segment becomes several file names with a
// suffix ("<name>._S3rver_object", "<name>._S3rver_object.md5", "<name>._S3rver_metadata.json"). A file name holds
// at most 255 bytes, so a last segment over 233 bytes cannot be stored (246 bytes + "._S3rver_object" is already
// 261), and a '..' segment would put the files outside the bucket's directory.

/** The S3 error a refused name answers, in s3rver's terms (code, message, detail elements). */
export interface S3Refusal {
  code: string;
  message: string;
  detail: Record<string, string | number>;
}

/** S3's own limit on a key. */
const MAX_KEY_BYTES = 1024;
/** A file or directory name on the filesystems the local stack runs on. */
export const MAX_FILE_NAME_BYTES = 255;
/** The longest suffix s3rver appends to a key's last segment. */
const LONGEST_STORE_SUFFIX = '._S3rver_metadata.json';
/** The longest last segment the local S3 can store. */
export const MAX_LAST_SEGMENT_BYTES = MAX_FILE_NAME_BYTES - Buffer.byteLength(LONGEST_STORE_SUFFIX);

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const shown = (segment: string): string => (segment.length > 40 ? `${segment.slice(0, 40)}…` : segment);

/**
 * Why the local S3 cannot store `key`, or undefined when it can. Keys over 1024 bytes are refused as S3 refuses them.
 * The other refusals are the local store's own: S3 accepts '..' and '.' segments, empty segments and long segments,
 * but here they would leave the data directory, alias another key (path.join drops empty and '.' segments) or
 * exceed a file name's length, so they answer an error instead of a write.
 */
export function keyRefusal(key: string): S3Refusal | undefined {
  const size = bytes(key);
  if (size > MAX_KEY_BYTES) {
    return { code: 'KeyTooLongError', message: 'Your key is too long', detail: { Size: size, MaxSizeAllowed: MAX_KEY_BYTES } };
  }
  if (key.includes('\0')) return invalidKey(key, 'the local S3 cannot store a key holding a NUL character');
  const segments = key.split('/');
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    if (segment === '.' || segment === '..') {
      const why = `a "${segment}" segment (its files would leave or alias the bucket's directory)`;
      return invalidKey(key, `the local S3 cannot store a key with ${why}`);
    }
    if (segment === '' && !last) {
      const why = 'an empty segment (a leading "/" or "//"): it would alias another key';
      return invalidKey(key, `the local S3 cannot store a key with ${why}`);
    }
    const max = last ? MAX_LAST_SEGMENT_BYTES : MAX_FILE_NAME_BYTES;
    if (bytes(segment) > max) {
      return {
        code: 'KeyTooLongError',
        message:
          `Your key is too long for the local S3: its segment "${shown(segment)}" is ${bytes(segment)} bytes, and the local S3 ` +
          `stores each segment as a file name of at most ${max} bytes (S3 itself accepts keys up to ${MAX_KEY_BYTES} bytes)`,
        detail: { Size: bytes(segment), MaxSizeAllowed: max },
      };
    }
  }
  return undefined;
}

function invalidKey(key: string, why: string): S3Refusal {
  return { code: 'InvalidArgument', message: `Invalid key: ${why}`, detail: { ArgumentName: 'key', ArgumentValue: key } };
}

/** S3's bucket naming rules (general purpose buckets); any other name would be a path outside the store's root. */
export function bucketNameRefusal(bucket: string): S3Refusal | undefined {
  const valid = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) && !bucket.includes('..') && !/^\d+\.\d+\.\d+\.\d+$/.test(bucket);
  if (valid) return undefined;
  return { code: 'InvalidBucketName', message: 'The specified bucket is not valid.', detail: { BucketName: bucket } };
}
