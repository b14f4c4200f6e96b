// The body s3rver's form parser (busboy) is handed for a checked form: the fields the guard checked, rewritten in
// plain parts (canonicalForm), the file's bytes as they come, and the form's closing boundary right after the file.
// busboy never reads a part header the client wrote: not before the file (where it could read another field than the
// guard read, issue 37), nor after it, where S3 ignores the form's parts and where one header line starting with a
// space threw an uncaught TypeError in busboy's header parser (dicer), taking the process down.
import { type Readable, Transform } from 'node:stream';
import { canonicalForm } from './form-prefix';

/**
 * Passes the file's bytes on until the boundary that ends it, then the closing boundary, and ends; what follows is
 * read and dropped (the request's body is still read whole, so that the answer follows it).
 */
class FileThenClose extends Transform {
  private readonly delimiter: Buffer;
  /** The last bytes seen, which could begin the delimiter. */
  private carry = Buffer.alloc(0);
  private fileEnded = false;

  constructor(boundary: string, head: Buffer) {
    super();
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.push(head);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    if (this.fileEnded) return callback();
    const bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const end = bytes.indexOf(this.delimiter);
    if (end !== -1) {
      this.fileEnded = true;
      this.carry = Buffer.alloc(0);
      this.push(bytes.subarray(0, end));
      this.push(Buffer.concat([this.delimiter, Buffer.from('--\r\n')]));
      this.push(null);
      return callback();
    }
    const keep = Math.min(bytes.length, this.delimiter.length - 1);
    this.carry = Buffer.from(bytes.subarray(bytes.length - keep));
    this.push(bytes.subarray(0, bytes.length - keep));
    callback();
  }

  override _flush(callback: () => void): void {
    // The body ended inside the file: s3rver's parser answers that as it would have.
    if (!this.fileEnded && this.carry.length > 0) this.push(this.carry);
    callback();
  }
}

/** The form body s3rver reads: canonical fields and file header, then the file (`rest`, then what `req` sends). */
export function formBodyForS3rver(boundary: string, fields: readonly (readonly [string, string])[], rest: Buffer, req: Readable): Readable {
  const body = new FileThenClose(boundary, canonicalForm(boundary, fields));
  body.write(rest);
  // As s3rver's own reading of `req` did, an aborted request leaves the form unfinished (no error to hear).
  req.pipe(body);
  return body;
}
