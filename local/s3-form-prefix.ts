// The fields of a browser-based upload's form (multipart/form-data) that come before its file, read from the start of
// the body alone: S3 requires the policy, signature and key before the `file` part and ignores everything after it, so
// the local S3 checks them without reading (or keeping) the file. Pure: given the bytes received so far, it answers the
// fields, or that it needs more bytes, or why the form is malformed.

/** S3's limit on what precedes the file (MaxPostPreDataLengthExceededError). */
export const MAX_PRE_DATA_BYTES = 20 * 1024;

export type FormPrefix =
  | { state: 'fields'; fields: [string, string][] /** Whether a `file` part follows (false: the body ended without one). */; file: boolean }
  | { state: 'more' }
  | { state: 'malformed'; why: string };

/** The boundary of a multipart/form-data Content-Type, undefined when it has none. */
export function formBoundary(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/** Parameters of a Content-Disposition value (names lower-cased; quoted values unescaped), and its type. */
function disposition(value: string): { type: string; params: Map<string, string> } | undefined {
  const params = new Map<string, string>();
  const semicolon = value.indexOf(';');
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  let rest = semicolon === -1 ? '' : value.slice(semicolon + 1);
  const param = /^\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))\s*(?:;|$)/;
  while (rest.trim() !== '') {
    const m = param.exec(rest);
    if (!m) return undefined;
    const name = (m[1] ?? '').toLowerCase();
    if (params.has(name)) return undefined;
    params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '').trim());
    rest = rest.slice(m[0].length);
  }
  return { type, params };
}

/**
 * The fields before the `file` part of a body starting with `body`. Only plain fields may precede the file (a name, no
 * file name, no extended `name*` parameter): anything a multipart parser could read as another field name or value than
 * this one does is refused, so that the fields checked are the fields stored.
 */
export function readFormPrefix(body: Buffer, boundary: string): FormPrefix {
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: [string, string][] = [];
  let at = body.indexOf(delimiter);
  if (at === -1) return { state: 'more' };
  for (;;) {
    const after = at + delimiter.length;
    if (body.length < after + 2) return { state: 'more' };
    if (body.subarray(after, after + 2).toString('latin1') === '--') return { state: 'fields', fields, file: false };
    const headersEnd = body.indexOf('\r\n\r\n', after);
    if (headersEnd === -1) return { state: 'more' };
    const headerText = body
      .subarray(after, headersEnd)
      .toString('utf8')
      .replace(/^[ \t]*\r\n/, '');
    let name: string | undefined;
    let fileName = false;
    for (const line of headerText.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon === -1) return { state: 'malformed', why: 'a part header without a colon' };
      const header = line.slice(0, colon).trim().toLowerCase();
      // A field's value in another charset would be decoded otherwise by the parser that stores it.
      const charset = header === 'content-type' ? /;\s*charset="?([^";\s]+)/i.exec(line)?.[1]?.toLowerCase() : undefined;
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
        return { state: 'malformed', why: `a field in charset ${charset}` };
      if (header !== 'content-disposition') continue;
      const parsed = disposition(line.slice(colon + 1));
      if (!parsed || parsed.type !== 'form-data' || name !== undefined)
        return { state: 'malformed', why: 'a part whose Content-Disposition is not form-data with one name' };
      if ([...parsed.params.keys()].some((p) => p.endsWith('*'))) return { state: 'malformed', why: 'an extended (name*=) parameter' };
      name = parsed.params.get('name');
      fileName = parsed.params.has('filename');
    }
    if (name === undefined) return { state: 'malformed', why: 'a part without a name' };
    if (name === 'file') return { state: 'fields', fields, file: true };
    if (fileName) return { state: 'malformed', why: `a file part named '${name}' before the file` };
    const end = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (end === -1) return { state: 'more' };
    fields.push([name, body.subarray(headersEnd + 4, end).toString('utf8')]);
    at = end + 2;
  }
}
