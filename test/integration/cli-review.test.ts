// `icecat review`, `icecat images --review pending` and `icecat agreement` as a user runs them against the local stack
// (docs/design.md §10), on a seeded batch whose figures are computed by hand: text and --json, images named by file
// name (a duplicate's too) or fingerprint, and the refusals.
import { newClient, seedBatch, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';

const T0 = Date.UTC(2024, 5, 1);

let who: TestClient;
let batch: string;
beforeAll(async () => {
  who = await newClient('clirev');
  // At threshold 80: c95 and c85 cats, c70 and c10 not; c85 has a duplicate upload (copy-of-c85.jpg); bad failed.
  batch = await seedBatch(
    who.clientId,
    [
      { fprint: 'c95', uploadTs: T0, isCat: true, catConfidence: 95 },
      { fprint: 'c85', uploadTs: T0 + 1, isCat: true, catConfidence: 85, dupCount: 1 },
      { fprint: 'c70', uploadTs: T0 + 2, isCat: false, catConfidence: 70 },
      { fprint: 'c10', uploadTs: T0 + 3, isCat: false, catConfidence: 10 },
      { fprint: 'bad', uploadTs: T0 + 4, status: 'fail', error: { code: 'NotAnImage', message: 'not an image' } },
    ],
    { closed: true, done_ts: Date.now(), cat_min_conf: 80, n_total: 6, n_success: 4, n_fail: 1, n_duplicate: 1, n_cats: 2 },
  );
});

describe('icecat images --review pending', () => {
  it('lists the review queue least certain first, as a table and as JSON', async () => {
    const text = await icecat(['images', batch, '--review', 'pending'], who.key);
    const asJson = await icecat(['images', batch, '--review', 'pending', '--json'], who.key);

    expect(text.code).toBe(0);
    // |c − 80|: c85 5, c70 10, c95 15, c10 70.
    const rows = text.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(/\s{2,}/)[0]);
    expect(rows).toEqual(['c85.jpg', 'c70.jpg', 'c95.jpg', 'c10.jpg']);
    expect(text.stdout).toMatch(/^FILE\s+MACHINE\s+CAT CONFIDENCE/);
    expect(JSON.parse(asJson.stdout).items.map((i: { fprint: string }) => i.fprint)).toEqual(['c85', 'c70', 'c95', 'c10']);
  });

  it('refuses --review with --cats (usage, exit 1)', async () => {
    const run = await icecat(['images', batch, '--review', 'pending', '--cats'], who.key);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/--review.*cannot be used with.*--cats|--cats.*cannot be used with.*--review/);
  });
});

describe('icecat review', () => {
  it('gives a verdict on an image named by its file name, with a note, and says what the machine said', async () => {
    const run = await icecat(['review', batch, 'c70.jpg', '--cat', '--note', 'tail behind the pot'], who.key);

    expect([run.code, run.stdout.trim()]).toEqual([0, 'c70.jpg: cat (the machine said: not a cat) — tail behind the pot']);
  });

  it("takes a duplicate's file name for its original, and prints the image as JSON with --json", async () => {
    const run = await icecat(['review', batch, 'copy-of-c85.jpg', '--not-cat', '--json'], who.key);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ fprint: 'c85', isCat: false, machineIsCat: true, review: { isCat: false, note: null } });
  });

  it('takes a fingerprint', async () => {
    const run = await icecat(['review', batch, 'c95', '--cat'], who.key);

    expect([run.code, run.stdout.trim()]).toEqual([0, 'c95.jpg: cat (as the machine said)']);
  });

  it('shows the verdicts in the summary and leaves the queue with the one image not reviewed', async () => {
    const status = await icecat(['status', batch], who.key);
    const queue = await icecat(['images', batch, '--review', 'pending', '--json'], who.key);

    expect(status.stdout).toMatch(/reviewed:\s+3/);
    expect(status.stdout).toMatch(/corrected:\s+2/);
    expect(JSON.parse(queue.stdout).items.map((i: { fprint: string }) => i.fprint)).toEqual(['c10']);
  });

  it.each([
    ['neither --cat nor --not-cat', ['c10'], /--cat or --not-cat/],
    ['both --cat and --not-cat', ['c10', '--cat', '--not-cat'], /cannot be used with/],
    ['a note over 500 characters', ['c10', '--cat', '--note', 'x'.repeat(501)], /at most 500 characters/],
    ['an image the batch does not have', ['nothing.jpg', '--cat'], /has no image named nothing\.jpg/],
    ['a failed image', ['bad', '--cat'], /failed \(NotAnImage\)/],
  ])('refuses %s with exit 1 and a message on stderr', async (_, args, message) => {
    const run = await icecat(['review', batch, ...args], who.key);

    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toMatch(message);
  });

  it('withdraws a verdict', async () => {
    const run = await icecat(['review', batch, 'c95', '--withdraw', '--json'], who.key);

    expect(JSON.parse(run.stdout)).toMatchObject({ fprint: 'c95', isCat: true, review: null });
  });
});

describe('icecat agreement', () => {
  it('prints the hand-computed figures and the suggested threshold, and the same as JSON', async () => {
    // Reviewed: c70 (machine no, person cat) and c85 (machine cat, person no): agree 0; precision 0/1, recall 0/1.
    // Each stretch from its lowest point: 0.01 → c70 and c85 cats: c70 right, c85 wrong: 1; 70.01 → c85 cat: 0;
    // 85.01 → none: c85 right: 1. Lowest of the best: 0.01.
    const text = await icecat(['agreement', batch], who.key);
    const asJson = await icecat(['agreement', batch, '--json'], who.key);

    expect(JSON.parse(asJson.stdout)).toEqual({
      reviewed: 2,
      agree: 0,
      precision: 0,
      recall: 0,
      suggestedCatMinConfidence: 0.01,
      catMinConfidence: 80,
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/reviewed:\s+2\n/);
    expect(text.stdout).toMatch(/suggested:\s+0\.01\n/);
    expect(text.stdout).toContain(`:reclassify {"catMinConfidence": 0.01}`);
  });
});
