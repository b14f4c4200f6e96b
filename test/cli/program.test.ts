import { buildProgram, type Handlers } from '../../lib/cli/program';

type Call = [name: keyof Handlers, ...args: unknown[]];

function harness() {
  const calls: Call[] = [];
  const out: string[] = [];
  const err: string[] = [];
  const record =
    (name: keyof Handlers) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return 0;
    };
  const handlers = Object.fromEntries(
    (['upload', 'batches', 'status', 'images', 'export', 'logs', 'close', 'delete', 'similar'] as const).map((n) => [n, record(n)]),
  ) as unknown as Handlers;
  const { run } = buildProgram(handlers, { writeOut: (t) => out.push(t), writeErr: (t) => err.push(t) });
  return { run, calls, out: () => out.join(''), err: () => err.join('') };
}

describe('icecat command line', () => {
  it('parses upload with its defaults: concurrency 8, no wait, no JSON', async () => {
    const h = harness();

    const code = await h.run(['upload', 'photos', 'more/cat.jpg']);

    expect(code).toBe(0);
    expect(h.calls).toEqual([['upload', ['photos', 'more/cat.jpg'], expect.objectContaining({ concurrency: 8 })]]);
    const opts = h.calls[0]?.[2] as Record<string, unknown>;
    expect(opts.wait).toBeUndefined();
    expect(opts.json).toBeUndefined();
  });

  it('parses every upload flag and the global connection flags wherever they stand', async () => {
    const h = harness();

    await h.run([
      '--api-url',
      'http://api.test',
      'upload',
      'photos',
      '--batch',
      'trip_2026',
      '--debug',
      '--wait',
      '--json',
      '-c',
      '3',
      '--dry-run',
      '--api-key',
      'k1',
    ]);

    expect(h.calls[0]?.[2]).toMatchObject({
      apiUrl: 'http://api.test',
      apiKey: 'k1',
      batch: 'trip_2026',
      debug: true,
      wait: true,
      json: true,
      concurrency: 3,
      dryRun: true,
    });
  });

  it('parses --wait-timeout in seconds', async () => {
    const h = harness();

    await h.run(['upload', 'photos', '--wait', '--wait-timeout', '90']);

    expect(h.calls[0]?.[2]).toMatchObject({ wait: true, waitTimeout: 90 });
  });

  it.each([
    [['upload', 'photos', '--concurrency', '0'], /--concurrency.*must be a whole number from 1 to 64/],
    [['upload', 'photos', '--concurrency', 'many'], /must be a whole number/],
    [['upload', 'photos', '--wait', '--wait-timeout', '0'], /--wait-timeout.*must be a whole number from 1 to 604800/],
    [['upload', 'photos', '--batch', 'no spaces'], /batch id is 1-64 of/],
    [['upload'], /missing required argument 'paths'/],
    [['images', 'b1', '--status', 'lost'], /must be one of pending, processing, success, fail, duplicate/],
    [['export', 'b1', '--format', 'xml'], /Allowed choices are csv, jsonl/],
    [['frobnicate'], /unknown command 'frobnicate'/],
  ])('refuses %j with exit 1 and a message on stderr', async (argv, message) => {
    const h = harness();

    const code = await h.run(argv);

    expect(code).toBe(1);
    expect(h.err()).toMatch(message);
    expect(h.calls).toEqual([]);
  });

  it('prints help on stdout with exit 0, naming the configuration and exit codes', async () => {
    const h = harness();

    expect(await h.run(['--help'])).toBe(0);
    expect(h.out()).toMatch(/ICECAT_API_KEY/);
    expect(h.out()).toMatch(/2 {2}some file failed/);
  });

  it.each(['upload', 'batches', 'status', 'images', 'export', 'logs', 'close', 'delete', 'similar'])(
    'has --help on %s',
    async (command) => {
      const h = harness();

      expect(await h.run([command, '--help'])).toBe(0);
      expect(h.out()).toMatch(new RegExp(`^Usage: icecat ${command}`));
    },
  );

  it('takes --cats, --status and --json on images', async () => {
    const h = harness();

    await h.run(['images', 'b1', '--cats', '--status', 'success', '--json']);

    expect(h.calls).toEqual([['images', 'b1', expect.objectContaining({ cats: true, status: 'success', json: true })]]);
  });

  it('takes the format and output file on export', async () => {
    const h = harness();

    await h.run(['export', 'b1', '--format', 'jsonl', '-o', 'out.jsonl']);

    expect(h.calls).toEqual([['export', 'b1', expect.objectContaining({ format: 'jsonl', output: 'out.jsonl' })]]);
  });

  it('shows help and exits 1 when run without a command', async () => {
    const h = harness();

    expect(await h.run([])).toBe(1);
    expect(h.err()).toMatch(/Usage: icecat/);
  });
});
