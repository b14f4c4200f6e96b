// One name per concept per layer (docs/decisions/0028-one-name-per-concept.md): a type is exported from one lib file
// and imported elsewhere (the clients' contract mirrors the API's answers once, checked by test/types/client-contract.ts),
// every error class says it is one, and every error code is spelt one way.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..');
/** The one mirror: the API's answers as the CLI and the web app read them. */
const CONTRACT = 'lib/api/client-contract.ts';
/** The web app's door to the mirror: it passes the contract's types on (the test below holds it to that). */
const WEB_CONTRACT = 'web/api.ts';

const parsed = new Map<string, ts.SourceFile[]>();
function sourceFiles(dir: string): ts.SourceFile[] {
  const known = parsed.get(dir);
  if (known) return known;
  const files = readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .map((file) => ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true));
  parsed.set(dir, files);
  return files;
}

const exported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** Every type name each file exports: declared there, or passed on from elsewhere (`export type { X }`, `export { X } from`). */
function exportedTypeNames(files: ts.SourceFile[]): Map<string, string[]> {
  const declared = new Set<string>();
  const byName = new Map<string, string[]>();
  const add = (name: string, file: string): void => void byName.set(name, [...(byName.get(name) ?? []), file]);
  const reexports: [string, string, boolean][] = [];
  for (const sf of files) {
    for (const s of sf.statements) {
      if ((ts.isTypeAliasDeclaration(s) || ts.isInterfaceDeclaration(s)) && exported(s)) {
        declared.add(s.name.text);
        add(s.name.text, sf.fileName);
      }
      if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) {
        for (const el of s.exportClause.elements) reexports.push([el.name.text, sf.fileName, s.isTypeOnly || el.isTypeOnly]);
      }
    }
  }
  for (const [name, file, typeOnly] of reexports) if (typeOnly || declared.has(name)) add(name, file);
  return byName;
}

function errorClasses(dirs: string[]): { file: string; name: string; ctor: string[] | undefined }[] {
  const all = dirs.flatMap(sourceFiles).flatMap((sf) => {
    const found: { file: string; name: string; base: string | undefined; ctor: string[] | undefined }[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node) && node.name) {
        const base = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression.getText(sf);
        const ctor = node.members.find(ts.isConstructorDeclaration);
        const params = ctor?.parameters.map(
          (p) => (p.modifiers?.length ? `${p.modifiers.map((m) => m.getText(sf)).join(' ')} ` : '') + p.name.getText(sf),
        );
        found.push({ file: sf.fileName, name: node.name.text, base, ctor: params });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    return found;
  });
  const baseOf = new Map(all.map((c) => [c.name, c.base]));
  const isError = (name: string | undefined, seen = 0): boolean =>
    name !== undefined &&
    seen < 20 &&
    (baseOf.has(name) ? isError(baseOf.get(name), seen + 1) : /^(Error|RangeError|TypeError|S3Error)$/.test(name));
  return all.filter((c) => isError(c.base)).map(({ file, name, ctor }) => ({ file, name, ctor }));
}

const CODE_DIRS = ['lib', 'functions', 'local', 'web', 'scripts'];

describe('one name per concept', () => {
  test('no type or interface name is exported from two files of lib/, local/ and web/, but the client contract mirrors the API answers once', () => {
    const twice = [...exportedTypeNames(['lib', 'local', 'web'].flatMap(sourceFiles))]
      .map(([name, files]) => [name, files.filter((f) => f !== CONTRACT && f !== WEB_CONTRACT)] as const)
      .filter(([, files]) => files.length > 1)
      .map(([name, files]) => `${name}: ${files.join(', ')}`);
    expect(twice).toEqual([]);
  });

  test('no function, class or constant name is exported from two files of lib/, local/ and web/ (the same name, one concept)', () => {
    const byName = new Map<string, string[]>();
    for (const sf of ['lib', 'local', 'web'].flatMap(sourceFiles).filter((f) => f.fileName !== CONTRACT)) {
      for (const s of sf.statements) {
        if (!exported(s)) continue;
        const names = ts.isVariableStatement(s)
          ? s.declarationList.declarations.map((d) => d.name.getText(sf))
          : (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name
            ? [s.name.text]
            : [];
        for (const name of names) byName.set(name, [...(byName.get(name) ?? []), sf.fileName]);
      }
    }
    const twice = [...byName].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(', ')}`);
    expect(twice.sort()).toEqual([]);
  });

  test('the web app declares none of the contract types again: web/api.ts passes the one mirror on', () => {
    const contract = new Set(exportedTypeNames(sourceFiles('lib').filter((sf) => sf.fileName === CONTRACT)).keys());
    const redeclared = sourceFiles('web')
      .flatMap((sf) =>
        sf.statements
          .filter((s) => (ts.isTypeAliasDeclaration(s) || ts.isInterfaceDeclaration(s)) && contract.has(s.name.text))
          .map((s) => [sf.fileName, s] as const),
      )
      .map(([file, s]) => `${file}: ${(s as ts.InterfaceDeclaration).name.text}`);
    expect(contract.size).toBeGreaterThan(20);
    expect(redeclared).toEqual([]);
  });

  test('every error class of lib/, functions/, local/, web/ and scripts/ is named …Error', () => {
    const unnamed = errorClasses(CODE_DIRS)
      .filter((c) => !c.name.endsWith('Error'))
      .map((c) => `${c.file}: ${c.name}`);
    expect(unnamed).toEqual([]);
  });

  test('every error class of lib/, functions/, local/, web/ and scripts/ is built (message, options)', () => {
    const off = errorClasses(CODE_DIRS)
      .filter(
        ({ ctor }) => ctor !== undefined && !(ctor[0] === 'message' && (ctor.length === 1 || (ctor.length === 2 && ctor[1] === 'options'))),
      )
      .map((c) => `${c.file}: ${c.name}(${(c.ctor ?? []).join(', ')})`);
    expect(off).toEqual([]);
  });

  test('every error code is snake_case, but the image rejection codes shipped in PascalCase (a code is never reworded)', () => {
    const codes = CODE_DIRS.flatMap(sourceFiles)
      .filter((sf) => !sf.fileName.startsWith('local/detector/')) // Rekognition's own codes, answered as AWS spells them
      .flatMap((sf) => [...sf.text.matchAll(/readonly code(?:: string)? = '([^']+)'/g)].map((m) => m[1] as string));
    expect(codes.length).toBeGreaterThan(30);
    expect(codes.filter((c) => !/^[a-z]+(_[a-z]+)*$/.test(c))).toEqual([]);

    const errorsFile = sourceFiles('lib').find((sf) => sf.fileName === 'lib/ingest/errors.ts');
    const union = errorsFile?.statements.find(
      (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'RejectionCode',
    );
    const rejections = (union && ts.isUnionTypeNode(union.type) ? union.type.types : []).flatMap((t) =>
      ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal) ? [t.literal.text] : [],
    );
    const SHIPPED = ['InvalidKey', 'BatchClosed', 'Overwritten', 'EmptyFile', 'FileTooLarge', 'NotAnImage', 'UnsupportedFormat'].concat([
      'CorruptImage',
      'TooManyPixels',
      'ImageTooSmall',
      'DetectionRejected',
      'ProcessingFailed',
      'QuotaExceeded',
      // An import's (docs/design.md §16), named so by the contract beside the image rejections they join.
      'SourceChanged',
      'SourceMissing',
    ]);
    expect(rejections?.length).toBeGreaterThan(0);
    expect(rejections?.filter((c) => !SHIPPED.includes(c) && !/^[a-z]+(_[a-z]+)*$/.test(c))).toEqual([]);
  });
});
