// The fields of a browser-based upload's form (multipart/form-data) that come before its file, read from the start of
// the body alone: S3 requires the policy, signature and key before the `file` part and ignores everything after it, so
// the local S3 checks them without reading (or keeping) the file. Read incrementally (each byte scanned a bounded number
// of times, each part header parsed once, however the body is cut into chunks), and strictly: a part header another
// multipart parser could read otherwise (a backslash or a space in a name, a folded line, `name*=`, a header name
// with a space before its colon, ...) is refused. What was read is then handed on rewritten (canonicalForm), so that
// the parser that stores the file never reads the client's part headers at all: the fields checked are the fields stored.

/** S3's limit on what precedes the file (MaxPostPreDataLengthExceededError). */
export const MAX_PRE_DATA_BYTES = 20 * 1024;

export type FormPrefix =
  | {
      state: 'fields';
      fields: [string, string][];
      /** Whether a `file` part follows (false: the body ended without one). */
      file: boolean;
      /** The bytes received after the file part's headers: the file's first bytes, and what follows them. */
      rest: Buffer;
    }
  | { state: 'more' }
  | { state: 'malformed'; why: string };

/** RFC 7230's token: a header name, a parameter name, an unquoted parameter value. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A boundary as RFC 2046 allows it (bchars, no trailing space), at most 70 characters. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
/** The longest field name s3rver's parser (busboy) keeps whole: longer ones it truncates. */
const MAX_FIELD_NAME_BYTES = 100;

/** A header value's type and parameters (names lower-cased), undefined when it is not `type *(; name=value)`. */
function headerParameters(value: string): { type: string; params: Map<string, { value: string; escaped: boolean }> } | undefined {
  const type = /^[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z/-]+)[ \t]*/.exec(value);
  if (!type) return undefined;
  const params = new Map<string, { value: string; escaped: boolean }>();
  const param = /^;[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)=(?:"((?:[^"\\]|\\[^\r\n])*)"|([!#$%&'*+.^_`|~0-9A-Za-z-]+))[ \t]*/;
  let rest = value.slice(type[0].length);
  while (rest !== '') {
    const m = param.exec(rest);
    const name = m?.[1]?.toLowerCase();
    if (!m || name === undefined || params.has(name)) return undefined;
    const quoted = m[2];
    params.set(name, {
      value: quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : (m[3] ?? ''),
      escaped: quoted?.includes('\\') ?? false,
    });
    rest = rest.slice(m[0].length);
  }
  return { type: (type[1] ?? '').toLowerCase(), params };
}

/** The boundary of a multipart/form-data Content-Type, undefined when it has none, or one that parsers could differ on. */
export function formBoundary(contentType: string): string | undefined {
  const parsed = headerParameters(contentType);
  const boundary = parsed?.params.get('boundary');
  if (parsed?.type !== 'multipart/form-data' || boundary === undefined || boundary.escaped) return undefined;
  return BOUNDARY.test(boundary.value) ? boundary.value : undefined;
}

/** Whether a header line holds a control character other than a tab (a bare CR or LF included). */
function hasControlCharacter(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

type PartHeaders = { name: string; file: boolean } | { malformed: string };

/** The field name of a part's header block (CRLF-separated lines), refusing anything parsers could read otherwise. */
function partHeaders(block: string): PartHeaders {
  let name: string | undefined;
  let fileName = false;
  for (const line of block === '' ? [] : block.split('\r\n')) {
    if (/^[ \t]/.test(line)) return { malformed: 'a folded part header line' };
    if (hasControlCharacter(line)) return { malformed: 'a control character in a part header' };
    const colon = line.indexOf(':');
    const header = line.slice(0, colon).toLowerCase();
    if (colon === -1 || !TOKEN.test(header)) return { malformed: 'a part header line that is not name: value' };
    const value = line.slice(colon + 1);
    if (header === 'content-type') {
      // A field's value in another charset would be decoded otherwise by the parser that stores it.
      const charset = headerParameters(value)?.params.get('charset')?.value.toLowerCase();
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return { malformed: `a field in charset ${charset}` };
    }
    if (header !== 'content-disposition') continue;
    const parsed = headerParameters(value);
    if (!parsed || parsed.type !== 'form-data' || name !== undefined)
      return { malformed: 'a part whose Content-Disposition is not form-data with one name' };
    if ([...parsed.params.keys()].some((p) => p.endsWith('*'))) return { malformed: 'an extended (name*=) parameter' };
    const named = parsed.params.get('name');
    if (named === undefined) return { malformed: 'a part without a name' };
    if (named.escaped || !TOKEN.test(named.value) || Buffer.byteLength(named.value) > MAX_FIELD_NAME_BYTES)
      return { malformed: 'a part name that is not a plain token of at most 100 characters' };
    name = named.value;
    fileName = parsed.params.has('filename');
  }
  if (name === undefined) return { malformed: 'a part without a name' };
  const file = name.toLowerCase() === 'file';
  if (!file && fileName) return { malformed: `a file part named '${name}' before the file` };
  return { name, file };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the fields before the `file` part of a body pushed chunk by chunk. Keeps the bytes it was given (at most the
 * fields, and the last chunk); each search for a delimiter resumes where the last one stopped, so that a body fed a
 * byte at a time costs no more than one given whole. `work` counts what it did (for tests and benches).
 */
export class FormPrefixReader {
  readonly work = { bytesScanned: 0, headersParsed: 0 };
  private bytes = Buffer.alloc(1024);
  private length = 0;
  private readonly delimiter: Buffer;
  private readonly nextDelimiter: Buffer;
  private phase: 'start' | 'delimited' | 'headers' | 'value' = 'start';
  /** Where the current phase's bytes begin. */
  private cursor = 0;
  /** Where the pending search resumes (bytes before it were scanned and cannot begin a match). */
  private scanFrom = 0;
  private name = '';
  private readonly fields: [string, string][] = [];
  private answer: FormPrefix | undefined;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`--${boundary}`, 'latin1');
    this.nextDelimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** Bytes received so far. */
  get received(): number {
    return this.length;
  }

  push(chunk: Buffer): FormPrefix {
    if (this.answer) return this.answer;
    this.append(chunk);
    for (;;) {
      const step = this.step();
      if (step === 'more') return { state: 'more' };
      if (step !== 'next') return (this.answer = step);
    }
  }

  private append(chunk: Buffer): void {
    if (this.length + chunk.length > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.bytes.length * 2, this.length + chunk.length));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    chunk.copy(this.bytes, this.length);
    this.length += chunk.length;
  }

  /** The first `needle` at or after `from`, resuming the last search for it; -1 while it is not received yet. */
  private find(needle: Buffer, from: number): number {
    const start = Math.max(from, this.scanFrom);
    this.work.bytesScanned += Math.max(0, this.length - start);
    const at = this.bytes.subarray(0, this.length).indexOf(needle, start);
    this.scanFrom = at === -1 ? Math.max(start, this.length - needle.length + 1) : 0;
    return at;
  }

  private moveTo(phase: FormPrefixReader['phase'], cursor: number): 'next' {
    this.phase = phase;
    this.cursor = cursor;
    this.scanFrom = 0;
    return 'next';
  }

  private step(): FormPrefix | 'more' | 'next' {
    const { bytes, length, cursor } = this;
    switch (this.phase) {
      case 'start': {
        // The first delimiter opens the body, or follows a preamble on a line of its own.
        const opening = Math.min(length, this.delimiter.length);
        if (bytes.subarray(0, opening).equals(this.delimiter.subarray(0, opening))) {
          return opening < this.delimiter.length ? 'more' : this.moveTo('delimited', this.delimiter.length);
        }
        const at = this.find(this.nextDelimiter, 0);
        return at === -1 ? 'more' : this.moveTo('delimited', at + this.nextDelimiter.length);
      }
      case 'delimited': {
        if (length < cursor + 2) return 'more';
        if (bytes[cursor] === 0x2d && bytes[cursor + 1] === 0x2d)
          return { state: 'fields', fields: this.fields, file: false, rest: Buffer.alloc(0) };
        let at = cursor;
        while (at < length && (bytes[at] === 0x20 || bytes[at] === 0x09)) at++;
        if (length < at + 2) return 'more';
        if (bytes[at] !== 0x0d || bytes[at + 1] !== 0x0a) return { state: 'malformed', why: 'a boundary not followed by a line break' };
        return this.moveTo('headers', at + 2);
      }
      case 'headers': {
        // Searched from the line break before the headers: a part without headers ends them at once.
        const end = this.find(Buffer.from('\r\n\r\n'), cursor - 2);
        if (end === -1) return 'more';
        this.work.headersParsed++;
        const headers = partHeaders(end < cursor ? '' : bytes.subarray(cursor, end).toString('utf8'));
        if ('malformed' in headers) return { state: 'malformed', why: headers.malformed };
        if (headers.file) return { state: 'fields', fields: this.fields, file: true, rest: Buffer.from(bytes.subarray(end + 4, length)) };
        this.name = headers.name;
        return this.moveTo('value', end + 4);
      }
      case 'value': {
        const end = this.find(this.nextDelimiter, cursor);
        if (end === -1) return 'more';
        let value: string;
        try {
          value = utf8.decode(bytes.subarray(cursor, end));
        } catch {
          return { state: 'malformed', why: `field '${this.name}' is not UTF-8` };
        }
        this.fields.push([this.name, value]);
        return this.moveTo('delimited', end + this.nextDelimiter.length);
      }
    }
  }
}

/** The fields before the `file` part of a body starting with `body` (a reader given it whole). */
export function readFormPrefix(body: Buffer, boundary: string): FormPrefix {
  return new FormPrefixReader(boundary).push(body);
}

/**
 * The start of the form as the storing parser is handed it: the fields read (names lower-cased: S3's field names are
 * case-insensitive, as the policy check reads them), each in a plain part, then a plain `file` part's header. The
 * file's own bytes (`rest`) follow it, ending at the form's boundary as they did.
 */
export function canonicalForm(boundary: string, fields: readonly (readonly [string, string])[]): Buffer {
  const parts = fields.map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name.toLowerCase()}"\r\n\r\n${value}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  return Buffer.from(parts.join(''), 'utf8');
}

/** The Content-Type the storing parser is handed with a canonical form. */
export const canonicalContentType = (boundary: string): string => `multipart/form-data; boundary="${boundary}"`;
