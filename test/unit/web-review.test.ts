// Review mode's queue in the web app (DESIGN §10), without a browser: the order it shows images in, what a verdict,
// an undo and a skip do to it, what it does with a refused verdict, and how it words progress and the detector.

import type { Image } from '../../web/api';
import { catBadge } from '../../web/format';
import {
  again,
  current,
  emptyQueue,
  judge,
  machineSays,
  progress,
  type ReviewQueue,
  ratioText,
  refused,
  replaced,
  restart,
  restored,
  skip,
  thresholdText,
  undo,
  wantsMore,
  withPage,
} from '../../web/review';

const image = (fprint: string, more: Partial<Image> = {}): Image =>
  ({
    batchId: 'b',
    fprint,
    fileName: `${fprint}.jpg`,
    status: 'success',
    isCat: false,
    machineIsCat: false,
    labels: [],
    duplicates: 0,
    review: null,
    ...more,
  }) as Image;
const fprints = (list: Image[]) => list.map((i) => i.fprint);
const queueOf = (...names: string[]): ReviewQueue =>
  withPage(
    emptyQueue(),
    names.map((n) => image(n)),
    undefined,
  );

describe('the review queue, as the listing fills it', () => {
  it("keeps the API's order (uncertain first) and knows the listing ended without a cursor", () => {
    const first = withPage(emptyQueue(), [image('a'), image('b')], 'c1');
    const second = withPage(first, [image('c')], undefined);

    expect([fprints(first.queue), first.ended, first.cursor]).toEqual([['a', 'b'], false, 'c1']);
    expect([fprints(second.queue), second.ended, second.cursor]).toEqual([['a', 'b', 'c'], true, undefined]);
  });

  it('takes no image twice: not one it holds, judged here, or skipped, nor one already reviewed', () => {
    let q = queueOf('a', 'b', 'c');
    q = skip(judge(q, true));
    q = withPage(
      q,
      [image('a'), image('b'), image('c'), image('d'), image('e', { review: { isCat: true, note: null, reviewedAt: 't' } })],
      undefined,
    );

    expect([fprints(q.queue), fprints(q.skipped), q.given.map((v) => v.image.fprint)]).toEqual([['c', 'd'], ['b'], ['a']]);
  });

  it('wants the next page when few images are left and the listing goes on, never after its end', () => {
    const open = withPage(emptyQueue(), [image('a'), image('b')], 'more');
    const full = withPage(
      emptyQueue(),
      ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => image(n)),
      'more',
    );

    expect([wantsMore(emptyQueue()), wantsMore(open), wantsMore(full), wantsMore(queueOf('a'))]).toEqual([true, true, false, false]);
  });
});

describe('verdicts, undo and skip', () => {
  it('a verdict moves to the next image and is the first thing undo takes back', () => {
    const q = judge(judge(queueOf('a', 'b', 'c'), true), false);
    const once = undo(q);
    const twice = undo(once.queue);

    expect([current(q)?.fprint, q.given]).toEqual([
      'c',
      [
        { image: image('a'), isCat: true },
        { image: image('b'), isCat: false },
      ],
    ]);
    expect([once.undone?.image.fprint, once.undone?.isCat, current(once.queue)?.fprint]).toEqual(['b', false, 'b']);
    expect([twice.undone?.image.fprint, fprints(twice.queue.queue), twice.queue.given]).toEqual(['a', ['a', 'b', 'c'], []]);
  });

  it('undo with nothing given, and a verdict or skip with nothing left, change nothing', () => {
    const empty = queueOf();

    expect([undo(empty).undone, undo(empty).queue, judge(empty, true), skip(empty)]).toEqual([undefined, empty, empty, empty]);
  });

  it('skipped images come back once the listing is read to its end and the queue is empty, in the order skipped', () => {
    const q = skip(skip(queueOf('a', 'b')));
    const early = skip(withPage(emptyQueue(), [image('a'), image('b')], 'more'));

    expect([current(q), fprints(again(q).queue), again(q).skipped]).toEqual([undefined, ['a', 'b'], []]);
    expect(again(early)).toBe(early);
  });

  it('a refused verdict puts its image back in front, the verdict forgotten; a refused undo gives it again', () => {
    const judged = judge(judge(queueOf('a', 'b', 'c'), true), true);
    const back = refused(judged, 'a');
    const { queue: undone, undone: verdict } = undo(judged);
    const stands = restored(undone, verdict!);

    expect([fprints(back.queue), back.given.map((v) => v.image.fprint)]).toEqual([['a', 'c'], ['b']]);
    expect(refused(judged, 'zz')).toBe(judged);
    expect([fprints(stands.queue), stands.given.map((v) => v.image.fprint)]).toEqual([['c'], ['a', 'b']]);
  });

  it('an image read again replaces its stale copy in place', () => {
    const q = replaced(queueOf('a', 'b'), image('b', { imageUrl: 'fresh' }));

    expect([fprints(q.queue), q.queue[1]?.imageUrl]).toEqual([['a', 'b'], 'fresh']);
  });

  it('read again from the start (a new threshold), it keeps the current image and the verdicts, and forgets the skipped', () => {
    const q = restart(judge(skip(withPage(emptyQueue(), [image('a'), image('b'), image('c')], 'more')), true));

    expect([fprints(q.queue), q.given.map((v) => v.image.fprint), q.skipped, q.ended, q.cursor]).toEqual([
      ['c'],
      ['b'],
      [],
      false,
      undefined,
    ]);
  });
});

describe('how review mode words it', () => {
  const counts = { total: 45, success: 40, fail: 3, duplicate: 2, cats: 9 };

  it('counts reviewed of the classified images, moved by the verdicts still on their way, within 0..all', () => {
    expect([
      progress({ ...counts, reviewed: 12 }, 0),
      progress({ ...counts, reviewed: 12 }, 2),
      progress({ ...counts, reviewed: 0 }, -1),
      progress({ ...counts, reviewed: 40 }, 1),
      progress(counts, 0),
    ]).toEqual([
      { reviewed: 12, of: 40 },
      { reviewed: 14, of: 40 },
      { reviewed: 0, of: 40 },
      { reviewed: 40, of: 40 },
      { reviewed: 0, of: 40 },
    ]);
  });

  it("says the detector's verdict, not the person's, with the cat confidence", () => {
    expect([
      machineSays(image('a', { machineIsCat: true, isCat: true }), 87.4),
      machineSays(image('a', { machineIsCat: false, isCat: true, review: { isCat: true, note: null, reviewedAt: 't' } }), 12),
      machineSays(image('a', { machineIsCat: false }), null),
      machineSays(image('a', { machineIsCat: undefined, isCat: true }), 90),
    ]).toEqual(['a cat (87%)', 'not a cat (cat 12%)', 'not a cat', 'a cat (90%)']);
  });

  it('shows thresholds to a tenth and ratios as whole percentages, a dash when undefined', () => {
    expect([
      thresholdText(70),
      thresholdText(62.5),
      thresholdText(30.01),
      thresholdText(62.555),
      ratioText(0.666),
      ratioText(null),
      ratioText(1),
    ]).toEqual(['70%', '62.5%', '30.01%', '62.56%', '67%', '—', '100%']);
  });

  it("badges a cat by the detector's confidence, or as reviewed when a person said so whatever the confidence", () => {
    expect([
      catBadge(image('a', { isCat: true, catConfidence: 87.4 })),
      catBadge(image('a', { isCat: true, catConfidence: 0, review: { isCat: true, note: null, reviewedAt: 't' } })),
      catBadge(image('a', { isCat: true, catConfidence: null })),
    ]).toEqual(['Cat 87%', 'Cat, reviewed', 'Cat']);
  });
});
