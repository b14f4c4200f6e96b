// The bundles' stand-in for semver (scripts/bundle.ts semverGteOnly): the tracer's X-Ray SDK and cls-hooked call only
// semver.gte, on plain versions; the stand-in answers as semver does, and a bundle that imports them carries it alone.

import path from 'node:path';
import { build } from 'esbuild';
import { SEMVER_GTE_MODULE, semverGteOnly } from '../../scripts/bundle';

// The semver the packages would have loaded (it ships no types; the project does not depend on it itself).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as { gte(a: string, b: string): boolean };

const ROOT = path.resolve(__dirname, '..', '..');

// eslint-disable-next-line @typescript-eslint/no-require-imports
const standIn = () => require(path.join(ROOT, SEMVER_GTE_MODULE)) as { gte(a: string, b: string): boolean };

const VERSIONS = ['0.0.0', '1.2.3', 'v8.0.0', '8.0.0', '7.99.99', '20.19.0', '22.12.0', '2.1354.0', '2.1354.1', '10.0.0', '9.10.10'];

it('answers gte as semver does, for every pair of plain versions', () => {
  const { gte } = standIn();
  const pairs = VERSIONS.flatMap((a) => VERSIONS.map((b) => [a, b] as const));
  expect(pairs.filter(([a, b]) => gte(a, b) !== semver.gte(a, b))).toEqual([]);
});

it('refuses what is no version, as semver does', () => {
  expect(() => standIn().gte('not a version', '1.0.0')).toThrow(TypeError);
  expect(() => semver.gte('not a version', '1.0.0')).toThrow(TypeError);
});

it("replaces semver for cls-hooked and the X-Ray SDK in a bundle, which then holds none of semver's files", async () => {
  const out = await build({
    absWorkingDir: ROOT,
    stdin: { contents: "require('aws-xray-sdk-core'); module.exports = require('cls-hooked');", resolveDir: ROOT, loader: 'js' },
    bundle: true,
    platform: 'node',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [semverGteOnly(ROOT)],
  });
  const inputs = Object.keys(out.metafile.inputs);
  expect(inputs.filter((f) => /node_modules[\\/]semver[\\/]/.test(f))).toEqual([]);
  expect(inputs).toContain(SEMVER_GTE_MODULE);
});
