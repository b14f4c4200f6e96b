// The form guard's reader does work linear in the bytes it is given, however they are cut (issue 37: a 20 KB field
// block fed a byte per chunk cost quadratic CPU, each chunk re-concatenating and re-parsing the whole buffer). Counted,
// not timed: the bytes it scans for delimiters and the part headers it parses, as the reader reports them.
import { FormPrefixReader, MAX_PRE_DATA_BYTES } from '../../local/s3/form-prefix';

const BOUNDARY = '----icecat-form-boundary-0123456789';

/** Fields of about `bytes` bytes in all (many small ones, as a hostile client would send), then the file's header. */
function fieldBlock(bytes: number): { body: Buffer; parts: number } {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="x-ignore-${i}"\r\n\r\n${'v'.repeat(40)}\r\n`;
    parts.push(part);
    size += part.length;
  }
  parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cat.jpg"\r\n\r\nJPEG`);
  return { body: Buffer.from(parts.join('')), parts: parts.length };
}

/** Feeds a body a byte per chunk; answers the reader's work and its last answer. */
function feedBytewise(body: Buffer) {
  const reader = new FormPrefixReader(BOUNDARY);
  let answer = reader.push(body.subarray(0, 1));
  for (let i = 1; i < body.length && answer.state === 'more'; i++) answer = reader.push(body.subarray(i, i + 1));
  return { work: reader.work, answer };
}

describe('FormPrefixReader', () => {
  it('reads a 20 KB field block fed a byte per chunk with linear work, each part header parsed once', () => {
    const big = fieldBlock(MAX_PRE_DATA_BYTES - 200);
    const half = fieldBlock((MAX_PRE_DATA_BYTES - 200) / 2);

    const whole = feedBytewise(big.body);
    const halfWork = feedBytewise(half.body).work;

    expect(whole.answer).toMatchObject({ state: 'fields', file: true });
    expect(whole.answer.state === 'fields' && whole.answer.fields.length).toBe(big.parts - 1);
    expect(whole.work.headersParsed).toBe(big.parts);
    // Each byte is looked at a bounded number of times (at most once per byte of the delimiter it may begin)...
    expect(whole.work.bytesScanned).toBeLessThanOrEqual(big.body.length * (BOUNDARY.length + 6));
    // ...so twice the bytes cost twice the work (quadratic work would cost four times).
    expect(whole.work.bytesScanned / halfWork.bytesScanned).toBeLessThan(2.2);
  });

  it('does the same work for a body given whole as for one cut anywhere', () => {
    const { body } = fieldBlock(4096);
    const reader = new FormPrefixReader(BOUNDARY);
    reader.push(body);
    const cut = new FormPrefixReader(BOUNDARY);
    cut.push(body.subarray(0, 1000));
    const answer = cut.push(body.subarray(1000));

    expect(answer).toMatchObject({ state: 'fields', file: true });
    expect(cut.work.headersParsed).toBe(reader.work.headersParsed);
    expect(cut.work.bytesScanned).toBeLessThanOrEqual(reader.work.bytesScanned + 2 * BOUNDARY.length + 8);
  });
});
