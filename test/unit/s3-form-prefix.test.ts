import { formBoundary, readFormPrefix } from '../../local/s3-form-prefix';

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

  it('unescapes quoted names as parsers do', () => {
    expect(readFormPrefix(body(field('form-data; name="x-amz-meta-\\"q\\""', 'v'), `--${B}--`), B)).toMatchObject({
      fields: [['x-amz-meta-"q"', 'v']],
    });
  });

  it('reads the boundary of a Content-Type, quoted or not', () => {
    expect(formBoundary('multipart/form-data; boundary=----abc')).toBe('----abc');
    expect(formBoundary('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(formBoundary('multipart/form-data')).toBeUndefined();
  });
});
