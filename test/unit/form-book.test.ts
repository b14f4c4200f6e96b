import type { UploadForm } from '../../lib/api/client-contract';
import { FormBook } from '../../lib/api/form-book';

interface File {
  name: string;
}

const LIFETIME_MS = 8_000;
let now: number;
let renewals: string[][];
let serial: number;

const formsOf = (files: File[]) => ({
  uploads: files.map((f): UploadForm => ({ file: f.name, url: 'http://s3', fields: { n: String(serial++) } })),
  expiresAt: new Date(now + LIFETIME_MS).toISOString(),
});

function book(): FormBook<File> {
  return new FormBook<File>(
    async (files) => {
      renewals.push(files.map((f) => f.name));
      return formsOf(files);
    },
    () => now,
    10,
  );
}

const files = ['a', 'b', 'c'].map((name) => ({ name }));

beforeEach(() => {
  now = Date.parse('2026-01-01T00:00:00Z');
  renewals = [];
  serial = 0;
});

describe('FormBook', () => {
  it('hands out a form as the API gave it while more than a quarter of its lifetime is left', async () => {
    const b = book();
    b.add(files, formsOf(files), now);
    now += LIFETIME_MS * 0.7;

    const form = await b.take('a');

    expect([form.fields.n, renewals]).toEqual(['0', []]);
  });

  it('renews a form about to expire, with every other due form not being sent, in one request', async () => {
    const b = book();
    b.add(files, formsOf(files), now);
    await b.take('b');
    now += LIFETIME_MS * 0.8;

    const form = await b.take('a');
    const c = await b.take('c');

    expect(renewals).toEqual([['a', 'c']]);
    expect([form.fields.n, c.fields.n]).toEqual(['3', '4']);
  });

  it('renews a form S3 found expired even when this clock says it is not (a clock behind)', async () => {
    const b = book();
    b.add(files, formsOf(files), now);
    const first = await b.take('a');

    const again = await b.take('a', true);

    expect(renewals).toEqual([['a']]);
    expect(again).not.toBe(first);
  });

  it('renews once a call even if the new form already looks expired (a clock ahead of the API), never looping', async () => {
    const expired = (f: File[]) => ({ ...formsOf(f), expiresAt: new Date(now - 1).toISOString() });
    const ahead = new FormBook<File>(
      async (f) => (renewals.push(f.map((x) => x.name)), expired(f)),
      () => now,
      10,
    );
    ahead.add(files, expired(files), now - LIFETIME_MS);

    const form = await ahead.take('a');

    expect(renewals).toEqual([['a', 'b', 'c']]);
    expect(form.fields.n).toBe('3');
  });
});
