import { readFileSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { inlineSchemaKeys, sdkPackageVersions, treeShakableSchemas } from '../../scripts/bundle';

const ROOT = path.resolve(__dirname, '..', '..');

/** One CommonJS bundle of `source`, built like a function's (ESM entry points, minified unless said otherwise). */
async function bundle(source: string, plugins: Plugin[], minify = true): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    mainFields: ['module', 'main'],
    minify,
    write: false,
    logLevel: 'silent',
    plugins,
  });
  return result.outputFiles[0]!.text;
}

/** The module's exports, evaluated. */
function load(code: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', 'require', code)(module, module.exports, require);
  return module.exports;
}

/** A schema as plain data: thunks followed (each schema once), classes by name. */
function plain(value: unknown, seen = new Set<unknown>()): unknown {
  if (typeof value === 'function') {
    if (/^class\b/.test(Function.prototype.toString.call(value))) return `class ${(value as { name: string }).name}`;
    return plain((value as () => unknown)(), seen);
  }
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return Array.isArray(value) && typeof value[2] === 'string' ? `→${value[2]}` : '→';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => plain(v, seen));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v, seen)]));
}

describe('inlineSchemaKeys', () => {
  it('writes a computed key naming a string constant as that string, and leaves every other bracket alone', () => {
    const source = [
      'const _hH = "httpHeader";',
      'const _B = "Bucket";',
      'export var S$ = [3, n0, _B, 0, [_B, _hH], [[0, { [_hH]: _B, [other]: 1 }], [0, {[_hH]:_B}]]];',
    ].join('\n');

    expect(inlineSchemaKeys(source).split('\n')[2]).toBe(
      'export var S$ = [3, n0, _B, 0, [_B, _hH], [[0, { "httpHeader": _B, [other]: 1 }], [0, {"httpHeader":_B}]]];',
    );
  });
});

describe('SDK schemas in a bundle', () => {
  it("evaluates every one of S3's schemas to the same data as the SDK's own module", async () => {
    const source = "export * from '@aws-sdk/client-s3/dist-es/schemas/schemas_0.js';";
    const [original, inlined] = await Promise.all([bundle(source, [], false), bundle(source, [treeShakableSchemas], false)]);
    const before = load(original);
    const after = load(inlined);

    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const name of Object.keys(before).filter((n) => n.endsWith('$')))
      expect([name, plain(after[name])]).toEqual([name, plain(before[name])]);
  });

  it("keeps only the operations a bundle sends: S3's PutObject without its bucket configuration shapes", async () => {
    const source =
      "import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3'; export const put = (p) => new S3Client({}).send(new PutObjectCommand(p));";
    const [whole, shaken] = await Promise.all([bundle(source, []), bundle(source, [treeShakableSchemas])]);

    expect(whole).toContain('"AnalyticsConfiguration"');
    expect(shaken).not.toContain('"AnalyticsConfiguration"');
    expect(shaken).toContain('"PutObjectRequest"');
    expect(whole.length - shaken.length).toBeGreaterThan(40_000);
  });

  it("gives the SDK's user agent the client's version from a package.json cut to name and version", async () => {
    const source = "export { default as info } from '@aws-sdk/client-sqs/package.json';";
    const { info } = load(await bundle(source, [sdkPackageVersions])) as { info: Record<string, unknown> };
    const { name, version } = JSON.parse(readFileSync(require.resolve('@aws-sdk/client-sqs/package.json'), 'utf8')) as {
      name: string;
      version: string;
    };

    expect(info).toEqual({ name, version });
  });
});
