// `icecat audit` and `icecat accuracy`: their parsing and what they print (docs/accuracy.md).
import { accuracyLines, auditLines } from '../../lib/cli/audit-output';
import { buildProgram, type Handlers } from '../../lib/cli/program';

function harness() {
  const calls: unknown[][] = [];
  const err: string[] = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return 0;
    };
  const handlers = { audit: record('audit'), accuracy: record('accuracy') } as unknown as Handlers;
  const { run } = buildProgram(handlers, { writeOut: () => {}, writeErr: (t) => err.push(t) });
  return { run, calls, err: () => err.join('') };
}

describe('icecat audit and accuracy, parsed', () => {
  it('takes a size from 1 to 500 and --json', async () => {
    const h = harness();
    expect(await h.run(['audit', 'trip', '--size', '100', '--json'])).toBe(0);
    expect(await h.run(['accuracy', 'trip'])).toBe(0);
    expect(h.calls).toEqual([
      ['audit', 'trip', expect.objectContaining({ size: 100, json: true })],
      ['accuracy', 'trip', expect.any(Object)],
    ]);
  });

  it.each([['0'], ['501'], ['ten']])('refuses --size %s before any request', async (size) => {
    const h = harness();
    expect(await h.run(['audit', 'trip', '--size', size])).toBe(1);
    expect(h.err()).toMatch(/--size.*whole number from 1 to 500/);
    expect(h.calls).toEqual([]);
  });

  it('refuses an audit without --size', async () => {
    const h = harness();
    expect(await h.run(['audit', 'trip'])).toBe(1);
    expect(h.err()).toMatch(/--size/);
  });
});

describe('what they print', () => {
  it('the draw: what it drew, per stratum, and what to do next', () => {
    const text = auditLines({
      batchId: 'trip',
      seed: 7,
      drawn: 4,
      sampled: 4,
      strata: [
        { stratum: 'cat', images: 10, sampled: 1, drawn: 1 },
        { stratum: 'notCat', images: 30, sampled: 3, drawn: 3 },
      ],
    });
    expect(text.split('\n').slice(0, 4)).toEqual([
      'drew 4 (seed 7); the sample holds 4',
      'stratum           images  sampled  drawn now',
      'machine: cat      10      1        1',
      'machine: not cat  30      3        3',
    ]);
  });

  it('the estimates with their intervals, a dash where none is supported', () => {
    const text = accuracyLines('trip', {
      sampled: 8,
      reviewed: 8,
      strata: [
        { stratum: 'cat', images: 10, sampled: 2, reviewed: 2, agree: 2 },
        { stratum: 'notCat', images: 30, sampled: 6, reviewed: 6, agree: 5 },
      ],
      precision: { estimate: 1, low: 0.4215, high: 1 },
      recall: null,
      accuracy: { estimate: 0.875, low: 0.7, high: 0.975 },
      cats: { estimate: 15, low: 10, high: 24 },
    });
    expect(text.split('\n').slice(0, 5)).toEqual([
      'estimate   value   95% interval',
      'precision  100.0%  42.2% – 100.0%',
      'recall     -       -',
      'accuracy   87.5%   70.0% – 97.5%',
      'cats       15      10 – 24',
    ]);
  });

  it('a row per model after a re-detection, each estimate with its interval', () => {
    const none = { precision: null, recall: null, accuracy: null, cats: null };
    const text = accuracyLines('trip', {
      sampled: 3,
      reviewed: 2,
      strata: [],
      ...none,
      models: [
        {
          model: { name: 'centernet', version: '3.3.6+mapping.3' },
          sampled: 3,
          reviewed: 2,
          precision: { estimate: 1, low: 1, high: 1 },
          recall: { estimate: 1, low: 0.5, high: 1 },
          accuracy: { estimate: 1, low: 0.6667, high: 1 },
          cats: { estimate: 1, low: 1, high: 2 },
        },
        { model: { name: 'an-older-model', version: '1' }, sampled: 3, reviewed: 2, ...none },
      ],
    });
    expect(text.split('\n').slice(-3)).toEqual([
      'model                      sampled  reviewed  precision                 recall                   accuracy                 cats',
      'centernet@3.3.6+mapping.3  3        2         100.0% (100.0% – 100.0%)  100.0% (50.0% – 100.0%)  100.0% (66.7% – 100.0%)  1 (1 – 2)',
      'an-older-model@1           3        2         -                         -                        -                        -',
    ]);
  });
});
