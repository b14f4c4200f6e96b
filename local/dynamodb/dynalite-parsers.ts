// dynalite's expression parsers (condition, update, projection: PEG.js 0.10 output) with their closures made once.
//
// A PEG.js parser declares every rule and action as a function inside `peg$parse`, so each parse makes ~200 new
// closures. V8 keeps a function's optimized code only weakly (through the closures' shared feedback): once no closure
// that runs it is alive, a full garbage collection drops it, and the next parse runs the rules unoptimized until
// TurboFan compiles them all again. In the stack every image takes ~10 DynamoDB requests, ~20 expressions parsed, and
// the serving heap has a full collection every ~10 images: the rules were compiled again after each one, ~18 ms of a
// core per image in V8's compiler threads (docs/design.md §9, "Where the stack's CPU goes").
//
// The same source, rearranged line by line (the generator's layout is fixed and the version pinned): the functions are
// declared once in a scope of their own, and a parse only resets the parser's state variables in that scope and runs
// the statements `peg$parse` ran. Parsing is synchronous and never re-entered (the context's callbacks parse
// nothing), so one scope serves every call; it keeps the last parse's input and context until the next one (one
// request's worth). A parser whose source does not have the expected layout stays as it is.
import { readFileSync } from 'node:fs';
import { compileFunction } from 'node:vm';
import { LocalStackError } from '../errors';

export class ParserLayoutError extends LocalStackError {
  override name = 'ParserLayoutError';
  readonly code: string = 'parser_layout';
}

/** dynalite's generated parsers, by module id. */
export const DYNALITE_PARSERS = ['dynalite/db/conditionParser', 'dynalite/db/updateParser', 'dynalite/db/projectionParser'] as const;

const START = 'function peg$parse(input, options) {';
/** A function declared in `peg$parse`: its rules and helpers at two spaces, the grammar's initializer's at four. */
const DECLARATION = /^( {2}| {4})function [\w$]+\(/;
/** The generator's one `var` statement of constants, actions and state, one declarator per line at six spaces. */
const VAR_START = '  var peg$FAILED = {},';
const DECLARATOR = /^ {6}([\w$]+)(?:\s*=\s*([\s\S]*?))?\s*[,;]?\s*$/;
/** The grammar initializer's variables, one per line at four spaces. */
const INITIALIZER_VAR = /^ {4}var ([\w$]+) = (.+)$/;

/**
 * The parser module's source with `peg$parse`'s functions declared once: `peg$parse` calls a function made once that
 * assigns the state variables and runs the original statements in their order. Throws ParserLayoutError when the
 * source is not laid out as PEG.js 0.10 lays it out.
 */
export function shareParserClosures(source: string): string {
  const lines = source.split('\n');
  const start = lines.indexOf(START);
  if (start === -1) throw new ParserLayoutError('no "function peg$parse(input, options) {" line');
  const end = lines.indexOf('}', start + 1);
  if (end === -1) throw new ParserLayoutError('peg$parse does not end');

  const names: string[] = [];
  const once: string[] = [];
  const perCall: string[] = [];
  let declarations = 0;
  let sawVar = false;
  for (let i = start + 1; i < end; i++) {
    const line = lines[i]!;
    const declaration = DECLARATION.exec(line);
    if (declaration) {
      const close = lines.indexOf(`${declaration[1]}}`, i + 1);
      if (close === -1 || close >= end) throw new ParserLayoutError(`the function at line ${i + 1} does not end`);
      once.push(...lines.slice(i, close + 1));
      declarations++;
      i = close;
    } else if (line === VAR_START) {
      if (sawVar) throw new ParserLayoutError('two peg$FAILED var statements');
      sawVar = true;
      i = declarators(lines, i, end, names, once, perCall);
    } else {
      const initializer = INITIALIZER_VAR.exec(line);
      if (initializer) {
        names.push(initializer[1]!);
        perCall.push(`    ${initializer[1]} = ${initializer[2]};`);
      } else if (/^\s*var\s/.test(line) || /^\s*(?:let|const|class)\s/.test(line)) {
        throw new ParserLayoutError(`an unexpected declaration at line ${i + 1}: ${line.trim()}`);
      } else {
        perCall.push(line);
      }
    }
  }
  if (!sawVar) throw new ParserLayoutError('no peg$FAILED var statement');
  if (declarations === 0) throw new ParserLayoutError('no rule functions');

  const rewritten = [
    START,
    '  return peg$sharedParse(input, options);',
    '}',
    '',
    'var peg$sharedParse = (function () {',
    `  var input, options, ${names.join(', ')};`,
    ...once,
    '  return function (input$, options$) {',
    '  input = input$;',
    '  options = options$;',
    ...perCall,
    '  };',
    '})();',
  ];
  return [...lines.slice(0, start), ...rewritten, ...lines.slice(end + 1)].join('\n');
}

/**
 * The var statement's declarators, from its first line: each name hoisted, a function-valued one (an action) made once,
 * any other assigned per call. Answers the index of its last line.
 */
function declarators(lines: string[], from: number, end: number, names: string[], once: string[], perCall: string[]): number {
  const first = lines[from]!.replace(/^ {2}var /, '      ');
  const texts: string[][] = [];
  let i = from;
  for (let line = first; ; line = lines[++i]!) {
    if (i >= end) throw new ParserLayoutError('the peg$FAILED var statement does not end');
    if (/^ {6}[\w$]/.test(line)) texts.push([line]);
    else if (line.trim() !== '') {
      if (texts.length === 0) throw new ParserLayoutError(`a declarator continues before one starts at line ${i + 1}`);
      texts[texts.length - 1]!.push(line);
    }
    if (/^ {6}\S.*;\s*$/.test(line)) break;
  }
  for (const text of texts) {
    const m = DECLARATOR.exec(text.join('\n'));
    if (!m) throw new ParserLayoutError(`a declarator not understood: ${text[0]!.trim()}`);
    const [, name, init] = m;
    names.push(name!);
    if (init === undefined) continue;
    (/^function\s*\(/.test(init) ? once : perCall).push(`  ${name} = ${init};`);
  }
  return i;
}

interface ParserModule {
  parse: (input: string, options?: unknown) => unknown;
  SyntaxError: unknown;
}

/** The module's exports, evaluated from the rewritten source of `file`. */
function loadShared(file: string): ParserModule {
  const source = shareParserClosures(readFileSync(file, 'utf8'));
  const module = { exports: {} as ParserModule };
  compileFunction(source, ['module', 'exports'], { filename: `${file} (closures made once)` })(module, module.exports);
  if (typeof module.exports.parse !== 'function') throw new ParserLayoutError(`${file} exports no parse function`);
  return module.exports;
}

let installed: string[] | undefined;

/**
 * Replaces the `parse` (and `SyntaxError`) of each of dynalite's parser modules with the rewritten one's, in place:
 * dynalite's validations call `parser.parse` on the module it required, whenever it was loaded. Once per process;
 * answers the module ids replaced. A parser that cannot be rewritten keeps its own, and `warn` hears why.
 */
export function installSharedParsers(warn: (line: string) => void = (line) => console.warn(line)): string[] {
  if (installed) return installed;
  installed = [];
  for (const id of DYNALITE_PARSERS) {
    try {
      const file = require.resolve(id);
      const shared = loadShared(file);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const original = require(file) as ParserModule;
      original.parse = shared.parse;
      original.SyntaxError = shared.SyntaxError;
      installed.push(id);
    } catch (err) {
      warn(`[dynamodb] ${id} keeps its own parser (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return installed;
}
