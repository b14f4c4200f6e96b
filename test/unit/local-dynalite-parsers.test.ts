// dynalite's expression parsers rewritten so that their rule and action functions are made once (local/dynamodb/dynalite-parsers.ts,
// docs/design.md §9): every expression parses to the same tree, or fails with the same error, as with the parser
// dynalite ships, and leaves the same unused names and values behind.
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { compileFunction } from 'node:vm';
import { DYNALITE_PARSERS, installSharedParsers, ParserLayoutError, shareParserClosures } from '../../local/dynamodb/dynalite-parsers';

interface Parser {
  parse(input: string, options: { context: Record<string, unknown> }): unknown;
}

const file = (id: string): string => require.resolve(id);

/** A parser module evaluated from source, apart from the one require() holds (which installSharedParsers changes). */
function evaluate(source: string): Parser {
  const module = { exports: {} as Parser };
  compileFunction(source, ['module', 'exports'])(module, module.exports);
  return module.exports;
}

// dynalite's own helpers the context carries (validations/index.js): its reserved words and its value comparison.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const db = require('dynalite/db') as { compare(op: string, a: unknown, b: unknown): boolean };
const RESERVED = new Set(['STATUS', 'NAME', 'SIZE', 'DATA', 'COUNT', 'DATE', 'KEY', 'VALUE']);
const isReserved = (name: string): boolean => RESERVED.has(name.toUpperCase());

const NAMES = { '#s': 'status', '#c': 'claim_id', '#n': 'name', '#l': 'labels', '#x': 'x' };
const VALUES = {
  ':p': { S: 'processing' },
  ':c': { S: 'claim-1' },
  ':n': { N: '3' },
  ':m': { N: '10' },
  ':z': { N: '1' },
  ':b': { BOOL: true },
  ':l': { L: [{ S: 'a' }] },
  ':t': { S: 'S' },
  ':bad': { S: 'Q' },
  ':ss': { SS: ['a', 'b'] },
};

function context(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    attrNames: NAMES,
    attrVals: VALUES,
    unusedAttrNames: Object.fromEntries(Object.keys(NAMES).map((k) => [k, true])),
    unusedAttrVals: Object.fromEntries(Object.keys(VALUES).map((k) => [k, true])),
    isReserved,
    compare: db.compare,
    ...extra,
  };
}

/** What a parse ends in: the tree or the error's name and message, and the unused names and values it leaves. */
function outcome(parser: Parser, input: string, extra?: Record<string, unknown>): unknown {
  const ctx = context(extra);
  let result: unknown;
  try {
    result = { tree: parser.parse(input, { context: ctx }) };
  } catch (err) {
    result = { error: (err as Error).name, message: (err as Error).message };
  }
  return { result, unusedNames: ctx.unusedAttrNames, unusedValues: ctx.unusedAttrVals };
}

const CONDITIONS = [
  'attribute_not_exists(pk)',
  'attribute_exists(pk) AND #s = :p',
  'attribute_not_exists(pk) OR (#s = :p AND #c = :c)',
  'NOT #s = :p',
  '#s <> :p AND n < :m AND n <= :m AND n > :z AND n >= :z',
  'n BETWEEN :z AND :m',
  'n BETWEEN :m AND :z',
  'n BETWEEN :z AND :p',
  '#s IN (:p, :c)',
  'begins_with(#n, :p)',
  'begins_with(#n, :n)',
  'attribute_type(#n, :t)',
  'attribute_type(#n, :bad)',
  'size(#l) > :z',
  'size(#l)',
  'contains(#l, :p)',
  'a.b[0].c = :p',
  'status = :p',
  '#undefined = :p',
  '#s = :undefined',
  '((#s = :p))',
  'unknown_fn(#s)',
  'attribute_exists(#s, :p)',
  '#s = #s',
  'AND',
  '#s = ',
  '',
  'x = :p OR x = :c OR NOT (x = :b)',
];

const UPDATES = [
  'SET #s = :p, #c = :c',
  'SET n = n + :z',
  'SET n = n - :z, #l = list_append(#l, :l)',
  'SET #x = if_not_exists(#x, :n)',
  'ADD n :z, tags :ss',
  'REMOVE #c, a.b[1]',
  'DELETE tags :ss',
  'SET #s = :p REMOVE #c ADD n :z',
  'SET #s = :p SET #c = :c',
  'SET a = :p, a.b = :c',
  'SET status = :p',
  'SET #s = :undefined',
  'ADD n :p',
  'SET #s = unknown(:p)',
  'SET',
  'SET a = list_append(:n, :l)',
];

const PROJECTIONS = ['a', 'a, b.c, d[1]', '#n, #l', 'a, a.b', 'status', '#undefined', 'a,', 'a[1][2].b'];

describe("dynalite's expression parsers, closures made once", () => {
  // Every case with its context's extra fields (jest would take a third parameter it did not pass for a callback).
  const cases: [string, string[], Record<string, unknown>][] = [
    ['dynalite/db/conditionParser', CONDITIONS, {}],
    [
      'dynalite/db/conditionParser',
      ['pk = :p AND begins_with(sk, :c)', 'pk = :p AND sk BETWEEN :z AND :m', 'pk = :p OR sk = :c', 'pk = '],
      { isKeyCondition: true },
    ],
    ['dynalite/db/updateParser', UPDATES, {}],
    ['dynalite/db/projectionParser', PROJECTIONS, {}],
  ];

  it.each(cases)('%s parses every expression as the shipped parser does', (id, inputs, extra) => {
    const source = readFileSync(file(id), 'utf8');
    const shipped = evaluate(source);
    const shared = evaluate(shareParserClosures(source));
    let failures = 0;
    for (const input of inputs) {
      const expected = outcome(shipped, input, extra);
      // Twice: the second parse runs in the scope the first one left.
      expect(outcome(shared, input, extra)).toEqual(expected);
      expect(outcome(shared, input, extra)).toEqual(expected);
      if ('error' in ((expected as { result: object }).result ?? {})) failures++;
    }
    // The corpus holds both: trees and errors.
    expect(failures).toBeGreaterThan(0);
    expect(failures).toBeLessThan(inputs.length);
  });

  it('parses interleaved expressions of different shapes without one leaking into the next', () => {
    const source = readFileSync(file('dynalite/db/conditionParser'), 'utf8');
    const shipped = evaluate(source);
    const shared = evaluate(shareParserClosures(source));
    const expected = CONDITIONS.map((input) => outcome(shipped, input));
    for (let round = 0; round < 3; round++) {
      const order = CONDITIONS.map((_, i) => (i * 7 + round) % CONDITIONS.length);
      for (const i of order) expect(isDeepStrictEqual(outcome(shared, CONDITIONS[i]!), expected[i])).toBe(true);
    }
  });

  it('declares the rules once, outside the function a parse calls', () => {
    const rewritten = shareParserClosures(readFileSync(file('dynalite/db/conditionParser'), 'utf8'));
    const parse = /function peg\$parse\(input, options\) \{\n([\s\S]*?)\n\}/.exec(rewritten)?.[1] ?? '';
    expect(parse.trim()).toBe('return peg$sharedParse(input, options);');
    expect(rewritten.match(/function peg\$parseStart\(/g)).toHaveLength(1);
    expect(rewritten.indexOf('function peg$parseStart(')).toBeLessThan(rewritten.indexOf('return function (input$, options$) {'));
  });

  it('refuses a source not laid out as PEG.js 0.10 lays it out', () => {
    expect(() => shareParserClosures('module.exports = { parse() {} };')).toThrow(ParserLayoutError);
    const source = readFileSync(file('dynalite/db/projectionParser'), 'utf8');
    expect(() => shareParserClosures(source.replace('  var peg$FAILED = {},', '  let peg$FAILED = {},'))).toThrow(ParserLayoutError);
  });

  it("replaces the parse of each of dynalite's parser modules", () => {
    expect(installSharedParsers(() => undefined)).toEqual([...DYNALITE_PARSERS]);
    for (const id of DYNALITE_PARSERS) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const parse = (require(file(id)) as { parse: () => unknown }).parse.toString();
      expect(parse).toContain('peg$sharedParse');
    }
  });
});
