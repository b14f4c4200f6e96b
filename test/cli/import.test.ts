// `icecat import`, `report` and `retry` as parsed (no network), the import's lines as printed, and the plain progress's
// listing lines: a new state at once, the same state's counts at most every few seconds.

import type { BatchSummary, ImportSummary } from '../../lib/api/client-contract';
import { importLine, importSourceOf } from '../../lib/cli/import-output';
import { summaryLines } from '../../lib/cli/output';
import { buildProgram, type Handlers } from '../../lib/cli/program';
import { plainProgress } from '../../lib/cli/progress';

function harness() {
  const calls: unknown[][] = [];
  const err: string[] = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return 0;
    };
  const handlers = { import: record('import'), report: record('report'), retry: record('retry') } as unknown as Handlers;
  const { run } = buildProgram(handlers, { writeOut: () => undefined, writeErr: (t) => err.push(t) });
  return { run, calls, err: () => err.join('') };
}

const listing: ImportSummary = {
  source: { bucket: 'acme-photos', prefix: '2024/' },
  state: 'listing',
  listed: 1000,
  enqueued: 980,
  skipped: 20,
  resumesAt: null,
};

describe('icecat import, report and retry on the command line', () => {
  it('takes a prefix or a manifest, with --batch, --wait and --wait-timeout', async () => {
    const h = harness();

    await h.run(['import', 's3://acme-photos/2024/', '--batch', 'library', '--wait', '--wait-timeout', '60']);
    await h.run(['import', '--manifest', 's3://acme-photos/manifests/list.csv']);
    await h.run(['import', 's3://acme-photos']);

    expect(h.calls.map((c) => c.slice(0, 2))).toEqual([
      ['import', { bucket: 'acme-photos', prefix: '2024/' }],
      ['import', { manifest: 's3://acme-photos/manifests/list.csv' }],
      ['import', { bucket: 'acme-photos', prefix: '' }],
    ]);
    expect(h.calls[0]?.[2]).toMatchObject({ batch: 'library', wait: true, waitTimeout: 60 });
  });

  it.each([
    [[], 'say what to import: s3://bucket/prefix, or --manifest s3://bucket/key'],
    [['s3://a-bucket/x/', '--manifest', 's3://a-bucket/m.csv'], 'give either s3://bucket/prefix or --manifest s3://bucket/key, not both'],
    [['acme-photos/2024/'], '"acme-photos/2024/" is not an s3://bucket/prefix address'],
    [['--manifest', 's3://a-bucket/dir/'], '--manifest s3://a-bucket/dir/ names no object'],
  ])('refuses import %j with exit 1 before any request', async (args, message) => {
    const h = harness();

    const code = await h.run(['import', ...args]);

    expect([code, h.calls]).toEqual([1, []]);
    expect(h.err()).toContain(message);
  });

  it('takes report -o, report --out and retry --wait', async () => {
    const h = harness();

    await h.run(['report', 'library', '-o', 'a.csv']);
    await h.run(['report', 'library', '--out', 'b.csv']);
    await h.run(['retry', 'library', '--wait']);

    expect(h.calls).toEqual([
      ['report', 'library', expect.objectContaining({ output: 'a.csv' })],
      ['report', 'library', expect.objectContaining({ output: 'b.csv' })],
      ['retry', 'library', expect.objectContaining({ wait: true })],
    ]);
  });

  it('reads an s3 address as parseS3Uri does', () => {
    expect(importSourceOf('s3://acme-photos/a b/', undefined)).toEqual({ bucket: 'acme-photos', prefix: 'a b/' });
  });
});

describe("an import's lines", () => {
  it('says the listing, the wait for the quota and until when, and the end of the listing', () => {
    expect(importLine(listing, { total: 990, finished: 312 })).toBe(
      'listing s3://acme-photos/2024/: 1000 keys listed, 990 images sent, 20 skipped (not images by name); 312 classified',
    );
    expect(importLine({ ...listing, state: 'waiting-for-quota', resumesAt: '2026-12-02T00:00:00.000Z' })).toBe(
      "waiting for the quota: today's images quota is used up with 980 images sent; the listing goes on at 2026-12-02T00:00:00.000Z, losing nothing",
    );
    expect(importLine({ ...listing, state: 'listed', source: { manifest: 's3://acme-photos/m.csv' } })).toBe(
      'listed manifest s3://acme-photos/m.csv: 1000 keys, 980 images sent, 20 skipped (not images by name)',
    );
  });

  it("adds the import's lines to a batch's summary", () => {
    const summary = {
      batchId: 'library',
      status: 'open',
      expected: null,
      counts: { total: 1, success: 1, fail: 0, duplicate: 0, cats: 0 },
      debug: false,
      createdAt: '2026-12-01T10:00:00.000Z',
      expiresAt: '2026-12-31T10:00:00.000Z',
      import: { ...listing, state: 'waiting-for-quota', resumesAt: '2026-12-02T00:00:00.000Z' },
    } satisfies BatchSummary;

    expect(summaryLines(summary).split('\n').slice(2, 8)).toEqual([
      'source:    s3://acme-photos/2024/',
      'import:    waiting-for-quota',
      'listed:    1000',
      'sent:      980',
      'skipped:   20',
      'resumes:   2026-12-02T00:00:00.000Z',
    ]);
  });
});

describe("the plain progress's listing lines", () => {
  it('prints a new state at once and the same state’s counts at most every 2 s', () => {
    const lines: string[] = [];
    let t = 0;
    const p = plainProgress({ write: (l) => lines.push(l), now: () => t });

    p.importing('listing', 'a');
    t = 500;
    p.importing('listing', 'b');
    p.importing('waiting-for-quota', 'c');
    t = 1000;
    p.importing('waiting-for-quota', 'c');
    t = 3000;
    p.importing('waiting-for-quota', 'd');

    expect(lines).toEqual(['a', 'c', 'd']);
  });
});
