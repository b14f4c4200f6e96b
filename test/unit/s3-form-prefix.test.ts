import { canonicalContentType, canonicalForm, formBoundary, readFormPrefix } from '../../local/s3/form-prefix';

const B = 'xyz';
const field = (disposition: string, value: string) => `--${B}\r\nContent-Disposition: ${disposition}\r\n\r\n${value}\r\n`;
const body = (...parts: string[]) => Buffer.from(parts.join(''));

describe('readFormPrefix', () => {
  it('answers the fields before the file, and that the file follows', () => {
    const prefix = readFormPrefix(
      body(
        field('form-data; name="key"', 'a/b.jpg'),
        field('form-data; name="Policy"', 'p'),
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename="c.jpg"\r\n\r\nJPEG`,
      ),
      B,
    );
    expect(prefix).toEqual({
      state: 'fields',
      fields: [
        ['key', 'a/b.jpg'],
        ['Policy', 'p'],
      ],
      file: true,
      rest: Buffer.from('JPEG'),
    });
  });

  it('asks for more bytes until the file part header is complete', () => {
    expect(readFormPrefix(body(field('form-data; name="key"', 'a')), B)).toEqual({ state: 'more' });
    expect(readFormPrefix(body(`--${B}\r\nContent-Disposition: form-data; name="ke`), B)).toEqual({ state: 'more' });
  });

  it('answers a body that ends without a file', () => {
    expect(readFormPrefix(body(field('form-data; name="key"', 'a'), `--${B}--\r\n`), B)).toEqual({
      state: 'fields',
      fields: [['key', 'a']],
      file: false,
      rest: Buffer.alloc(0),
    });
  });

  it('refuses what a multipart parser could read as another field than this one does', () => {
    for (const disposition of [
      "form-data; name*=utf-8''key",
      'form-data; name="key"; filename="k.txt"',
      'attachment; name="key"',
      'form-data',
      'form-data; name="a"; name="b"',
    ]) {
      expect([disposition, readFormPrefix(body(field(disposition, 'v')), B).state]).toEqual([disposition, 'malformed']);
    }
  });

  it('refuses a field in another charset than UTF-8, which the storing parser would decode otherwise', () => {
    const latin1 = `--${B}\r\nContent-Disposition: form-data; name="key"\r\nContent-Type: text/plain; charset=latin1\r\n\r\nv\r\n`;
    const utf8 = `--${B}\r\nContent-Disposition: form-data; name="key"\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\nv\r\n--${B}--`;
    expect(readFormPrefix(body(latin1), B).state).toBe('malformed');
    expect(readFormPrefix(body(utf8), B)).toMatchObject({ state: 'fields', fields: [['key', 'v']] });
  });

  it('refuses any part header parsers could read differently (issue 37: `fi\\le` read as `file` by one, not the other)', () => {
    const cases = {
      backslash: 'Content-Disposition: form-data; name="fi\\le"',
      escapedQuote: 'Content-Disposition: form-data; name="x-amz-meta-\\"q\\""',
      unquotedSpace: 'Content-Disposition: form-data; name=fi le',
      spaceBeforeColon: 'Content-Disposition : form-data; name="key"',
      foldedLine: 'Content-Disposition: form-data; name="file"\r\n\tX: ;name="key"',
      leadingSpace: ' Content-Disposition: form-data; name="key"',
      twoDispositions: 'Content-Disposition: form-data; name="a"\r\nContent-Disposition: form-data; name="key"',
      quoteInName: 'Content-Disposition: form-data; name="ke"y"',
      longName: `Content-Disposition: form-data; name="x-amz-meta-${'n'.repeat(100)}"`,
      controlCharacter: 'Content-Disposition: form-data; name="key"\x0b',
      extendedFileName: 'Content-Disposition: form-data; name="file"; filename*=utf-8\'\'a.jpg',
    };
    const states = Object.fromEntries(
      Object.entries(cases).map(([name, headers]) => [name, readFormPrefix(body(`--${B}\r\n${headers}\r\n\r\nv\r\n--${B}--`), B).state]),
    );
    expect(states).toEqual(Object.fromEntries(Object.keys(cases).map((name) => [name, 'malformed'])));
  });

  it('refuses a boundary not followed by a line break, and a field value that is not UTF-8', () => {
    expect(readFormPrefix(body(`--${B}X\r\nContent-Disposition: form-data; name="key"\r\n\r\nv\r\n--${B}--`), B).state).toBe('malformed');
    const latin1 = Buffer.concat([
      body(`--${B}\r\nContent-Disposition: form-data; name="key"\r\n\r\n`),
      Buffer.from([0xe9]),
      body(`\r\n--${B}--`),
    ]);
    expect(readFormPrefix(latin1, B).state).toBe('malformed');
  });

  it('takes the file part in any case, with any file name, and a preamble before the first boundary', () => {
    const file = `--${B}\r\nContent-Disposition: form-data; name="FILE"; filename="C:\\photos\\a \\"b\\".jpg"\r\n\r\nJPEG`;
    expect(readFormPrefix(body('a preamble\r\n', field('form-data; name="key"', 'k'), file), B)).toEqual({
      state: 'fields',
      fields: [['key', 'k']],
      file: true,
      rest: Buffer.from('JPEG'),
    });
  });

  it('hands on the fields checked in plain parts, names lower-cased, then a plain file part', () => {
    const form = canonicalForm(B, [
      ['Key', 'uploads/a/b.jpg'],
      ['x-amz-meta-note', 'ünïcode'],
    ]);
    expect(form.toString('utf8')).toBe(
      `--${B}\r\nContent-Disposition: form-data; name="key"\r\n\r\nuploads/a/b.jpg\r\n` +
        `--${B}\r\nContent-Disposition: form-data; name="x-amz-meta-note"\r\n\r\nünïcode\r\n` +
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    expect(readFormPrefix(form, B)).toMatchObject({
      state: 'fields',
      fields: [
        ['key', 'uploads/a/b.jpg'],
        ['x-amz-meta-note', 'ünïcode'],
      ],
    });
    expect(formBoundary(canonicalContentType('a b'))).toBe('a b');
  });

  it('reads the boundary of a Content-Type, quoted or not', () => {
    expect(formBoundary('multipart/form-data; boundary=----abc')).toBe('----abc');
    expect(formBoundary('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(formBoundary('multipart/form-data')).toBeUndefined();
  });

  it('reads a boundary as parameters are parsed, refusing one parsers could read differently', () => {
    // A regex finds `seen"` here (issue 37); parameters are `x` (quoted) and `boundary`.
    expect(formBoundary('multipart/form-data; x="; boundary=seen"; boundary=real')).toBe('real');
    for (const contentType of [
      'multipart/form-data; boundary=a; boundary=b',
      'multipart/form-data; boundary="a\\b"',
      'multipart/form-data; boundary="ends with space "',
      `multipart/form-data; boundary=${'b'.repeat(71)}`,
      'multipart/form-data; boundary=a b',
      'multipart/mixed; boundary=abc',
    ]) {
      expect([contentType, formBoundary(contentType)]).toEqual([contentType, undefined]);
    }
  });
});
