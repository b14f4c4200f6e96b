// The body of a browser-based upload form as the form guard (requests.ts) reads it: its fields before the file read
// and checked first, what is left of a refused one dropped, and its file refused once it leaves the policy's size range.
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { FormPrefixReader, MAX_PRE_DATA_BYTES } from './form-prefix';
import { sizeRefusal } from './post-policy';
import { type FilesystemStore, S3Error, s3Error } from './s3rver-store';

export const malformed = () => new S3Error('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');

/** Drops what is left of a request body as it arrives (kept nowhere), and closes its connection after the answer. */
export function discardBody(req: IncomingMessage): void {
  const res = (req as IncomingMessage & { res?: { shouldKeepAlive: boolean } }).res;
  if (res) res.shouldKeepAlive = false;
  req.removeAllListeners('readable');
  req.unpipe();
  req.resume();
}

/** Reads the body up to its file part: the fields before it, the bytes after its headers, and how many were read. */
export function readPrefix(
  req: IncomingMessage,
  boundary: string,
  timeoutMs: number,
): Promise<{ fields: [string, string][]; file: boolean; rest: Buffer; received: number }> {
  return new Promise((resolve, reject) => {
    const reader = new FormPrefixReader(boundary);
    const timer = setTimeout(
      () =>
        fail(
          new S3Error('RequestTimeout', 'Your socket connection to the server was not read from or written to within the timeout period.'),
        ),
      timeoutMs,
    );
    const stop = () => {
      clearTimeout(timer);
      req.off('readable', onReadable);
      req.off('end', onEnd);
      req.off('error', reject);
    };
    const fail = (err: Error) => {
      stop();
      reject(err);
    };
    const judge = (chunk: Buffer | undefined): boolean => {
      const prefix = chunk === undefined ? { state: 'more' as const } : reader.push(chunk);
      if (prefix.state === 'malformed') {
        fail(new S3Error('MalformedPOSTRequest', `The body of your POST request is not well-formed multipart/form-data: ${prefix.why}.`));
      } else if (prefix.state === 'fields') {
        stop();
        resolve({ fields: prefix.fields, file: prefix.file, rest: prefix.rest, received: reader.received });
      } else if (reader.received > MAX_PRE_DATA_BYTES) {
        fail(
          new S3Error('MaxPostPreDataLengthExceededError', 'Your POST request fields preceding the upload file were too large.', {
            MaxPostPreDataLengthBytes: MAX_PRE_DATA_BYTES,
          }),
        );
      } else if (chunk === undefined) {
        fail(malformed());
      } else {
        return false;
      }
      return true;
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = req.read() as Buffer | null) !== null) {
        if (judge(chunk)) return;
      }
    };
    // The body ended before the reader answered.
    const onEnd = () => void judge(undefined);
    req.on('readable', onReadable);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}

/** A view of the store whose object writes fail, leaving nothing, once the file leaves the policy's size range. */
export function sizeCheckedStore(store: FilesystemStore, range: { min: number; max: number }): FilesystemStore {
  const view = Object.create(store) as FilesystemStore;
  view.putObject = (object) => {
    const { content } = object;
    if (Buffer.isBuffer(content)) {
      const refusal = sizeRefusal(range, content.length);
      return refusal ? Promise.reject(s3Error(refusal)) : store.putObject(object);
    }
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        const refusal = size > range.max ? sizeRefusal(range, size) : undefined;
        if (refusal) callback(s3Error(refusal));
        else callback(null, chunk);
      },
      flush(callback) {
        const refusal = sizeRefusal(range, size);
        callback(refusal ? s3Error(refusal) : null);
      },
    });
    // A refused file: the rest of it is parsed and dropped (not stored), so that the answer follows the whole body.
    counted.on('error', () => {
      content.unpipe(counted);
      content.resume();
    });
    content.on('error', (err) => counted.destroy(err));
    // The file flows once the store listens for its errors: a refusal before that would go unheard.
    const start = (event: string | symbol) => {
      if (event !== 'error') return;
      counted.off('newListener', start);
      process.nextTick(() => content.pipe(counted));
    };
    counted.on('newListener', start);
    object.content = counted;
    return store.putObject(object);
  };
  return view;
}
