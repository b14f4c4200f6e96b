import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { BatchNotFoundError } from '../../lib/api/errors';
import { InvalidApiKeyError, MissingApiKeyError } from '../../lib/auth/api-keys';
import { EXIT, exitCodeFor, KeyRefusedError, OutOfSpaceError, UsageError } from '../../lib/cli/errors';
import { BatchClosedError, IceCatError } from '../../lib/errors';
import { OUT_OF_STORAGE, toHttpError } from '../../lib/http/middleware';
import { StoreThrottledError } from '../../lib/store/table/errors';

const root = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|cjs|mjs|js)$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** Every class declared in these folders: [file, class name, what it extends]. */
function classes(dirs: string[]): [string, string, string | undefined][] {
  return dirs
    .flatMap(sources)
    .flatMap((file) =>
      [
        ...readFileSync(join(root, file), 'utf8').matchAll(/^\s*(?:export\s+)?(?:abstract\s+)?class\s+(\w+)(?:\s+extends\s+([\w.]+))?/gm),
      ].map((m): [string, string, string | undefined] => [file, m[1] as string, m[2]]),
    );
}

describe('the error family', () => {
  test('no class in lib/ or functions/ extends a built-in error: each extends IceCatError (lib/errors.ts)', () => {
    const direct = classes(['lib', 'functions']).filter(
      ([file, , base]) => file !== 'lib/errors.ts' && /^(Error|RangeError|TypeError)$/.test(base ?? ''),
    );
    expect(direct).toEqual([]);
  });

  test("every error class of local/ is of local's family (LocalStackError, local/errors.ts), but a ConfigError and s3rver's S3Error", () => {
    const baseOf = new Map(classes(['local']).map(([, name, base]) => [name, base]));
    /** The first of the allowed roots up the class's chain, or the built-in (or unknown) class it ends at. */
    const rootOf = (name: string): string | undefined => {
      let at: string | undefined = name;
      for (let i = 0; at !== undefined && i < 20; i++) {
        const base = baseOf.get(at);
        if (base === undefined || /^(LocalStackError|ConfigError|S3Error)$/.test(base)) return base;
        at = base;
      }
      return at;
    };
    const outside = classes(['local'])
      .filter(([, name]) => name.endsWith('Error') && name !== 'LocalStackError')
      .map(([file, name]) => [file, name, rootOf(name)])
      .filter(([, , root]) => !/^(LocalStackError|ConfigError|S3Error)$/.test(root ?? ''));
    expect(outside).toEqual([]);
    expect(baseOf.get('LocalStackError')).toBe('IceCatError');
  });

  test('no two classes of the project share a name', () => {
    const byName = new Map<string, string[]>();
    for (const [file, name] of classes(['lib', 'functions', 'local', 'web', 'scripts', 'bench', 'events', 'test'])) {
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    expect([...byName].filter(([, files]) => files.length > 1)).toEqual([]);
  });

  test('every error class of lib/, functions/ and the local detector is built the one way: (message, options)', () => {
    // The shape of lib/errors.ts: the message first, whatever the error is about named in options (issue 29, item 15).
    const off: string[] = [];
    for (const file of [...sources('lib'), ...sources('functions'), 'local/detector/errors.ts'].filter((f) => f.endsWith('.ts'))) {
      const sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isClassDeclaration(node) && node.heritageClauses?.some((h) => /Error|Upload|Signal/.test(h.getText(sf)))) {
          for (const ctor of node.members.filter(ts.isConstructorDeclaration)) {
            const names = ctor.parameters.map((p) => p.name.getText(sf));
            const prefixed = ctor.parameters.some((p) => p.modifiers?.length);
            if (names[0] !== 'message' || (names[1] !== undefined && names[1] !== 'options') || names.length > 2 || prefixed) {
              off.push(`${file}: ${node.name?.text}(${names.join(', ')})`);
            }
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
    expect(off).toEqual([]);
  });

  test('a closed batch reads as closed once, naming its batch', () => {
    const err = new BatchClosedError('batch b1 was closed before this upload was counted', { batchId: 'b1' });

    expect([err.message, err.batchId]).toEqual(['batch b1 was closed before this upload was counted', 'b1']);
    expect(toHttpError(err)).toMatchObject({
      status: 409,
      code: 'batch_closed',
      message: 'batch b1 was closed before this upload was counted',
    });
  });

  test('every error keeps its cause and has a stable code', () => {
    const cause = new Error('ProvisionedThroughputExceededException');
    const err = new StoreThrottledError('the table is throttling reads', { cause });

    expect(err).toBeInstanceOf(IceCatError);
    expect(err.cause).toBe(cause);
    expect(err.code).toBe('throttled');
  });

  test('the API answers the code the error carries, by one table', () => {
    expect(toHttpError(new BatchNotFoundError(`batch b not found`, { batchId: 'b' }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(toHttpError(new BatchClosedError(`batch b is closed`, { batchId: 'b' }))).toMatchObject({
      status: 409,
      code: 'batch_closed',
      message: 'batch b is closed',
    });
    expect(toHttpError(new StoreThrottledError('x'))).toEqual({
      status: 429,
      code: 'throttled',
      message: 'too many requests; retry later',
    });
  });

  test('a code of the family that the API does not answer is a 500 that shows nothing', () => {
    class Unlisted extends IceCatError {
      readonly code = 'made_up_for_this_test';
    }
    expect(toHttpError(new Unlisted('secret detail'))).toEqual({ status: 500, code: 'internal_error', message: 'internal error' });
  });

  test('the CLI names a refused key with the code the API answers for it, and exits 1', () => {
    const apiCode = toHttpError(new InvalidApiKeyError('bad key')).code;

    expect(new KeyRefusedError('the API refused the key').code).toBe(apiCode);
    expect(toHttpError(new MissingApiKeyError('no key')).code).toBe(apiCode);
    expect(exitCodeFor(apiCode)).toBe(EXIT.failure);
  });

  test('the CLI exits 2 on the code the API answers when out of storage, 1 on a usage error', () => {
    expect(new OutOfSpaceError('full', { service: 'the API' }).code).toBe(OUT_OF_STORAGE.code);
    expect(exitCodeFor(OUT_OF_STORAGE.code)).toBe(EXIT.someFailed);
    expect(exitCodeFor(new UsageError('bad flag').code)).toBe(EXIT.failure);
  });
});
