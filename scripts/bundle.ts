// Builds one Lambda deployment artifact: the handler bundled by esbuild, plus the native packages it keeps
// external (sharp) installed for the Lambda platform (linux, glibc, the function's architecture), zipped.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type BuildOptions, build, type Metafile, type Plugin } from 'esbuild';
import { buildWebBundle } from '../lib/web/build';
import { extraEntries } from './bundle-extras';
import { writeZip } from './zip';

export type LambdaArchitecture = 'x86_64' | 'arm64';

/**
 * Packages that cannot be bundled (native binaries): shipped as node_modules for the target platform. sharp brings
 * its binaries as per-platform optional dependencies; xxhash-addon (the fingerprint's XXH3) carries every
 * platform's under prebuilds/, of which the artifact keeps only the target's.
 */
export const NATIVE_PACKAGES = ['sharp', 'xxhash-addon'] as const;

/** What Lambda runs: always linux with glibc (Amazon Linux 2023). */
export interface LambdaPlatform {
  os: 'linux';
  cpu: 'x64' | 'arm64';
  libc: 'glibc';
}

export const lambdaPlatform = (architecture: LambdaArchitecture): LambdaPlatform => ({
  os: 'linux',
  cpu: architecture === 'arm64' ? 'arm64' : 'x64',
  libc: 'glibc',
});

export class BundleError extends Error {
  override name = 'BundleError';
}

export interface BundleRequest {
  /** The function's name, used for the artifact's file name. */
  name: string;
  /** osls handler string, e.g. functions/ingest/handler.handler. */
  handler: string;
  architecture: LambdaArchitecture;
  /** Node version the bundle targets, e.g. node20. */
  nodeTarget: string;
  projectDir: string;
  outDir: string;
}

export interface BundleResult {
  name: string;
  artifact: string;
  /** Bytes of the bundled JavaScript (what Lambda parses at cold start). */
  bundleBytes: number;
  /** Bytes of the zip. */
  artifactBytes: number;
  nativePackages: string[];
}

/** functions/api/handler.handler → functions/api/handler.ts (the source) and functions/api/handler.js (in the zip). */
export function handlerPaths(handler: string): { source: string; output: string } {
  const dot = handler.lastIndexOf('.');
  if (dot <= 0) throw new BundleError(`handler "${handler}" must look like path/to/file.exportName`);
  const modulePath = handler.slice(0, dot);
  return { source: `${modulePath}.ts`, output: `${modulePath}.js` };
}

/** The externals a bundle actually imports, read from esbuild's metafile. */
export function importedExternals(metafile: Metafile): string[] {
  const found = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imp of output.imports) {
      if (!imp.external) continue;
      const name = NATIVE_PACKAGES.find((p) => imp.path === p || imp.path.startsWith(`${p}/`));
      if (name) found.add(name);
    }
  }
  return [...found].sort();
}

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

const readPackageJson = (dir: string): PackageJson => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;

/** npm's rule for os/cpu/libc fields: absent means any; '!x' excludes x. */
function fieldAccepts(field: string[] | undefined, value: string): boolean {
  if (!field || field.length === 0) return true;
  if (field.includes(`!${value}`)) return false;
  const positives = field.filter((v) => !v.startsWith('!'));
  return positives.length === 0 || positives.includes(value);
}

export function packageRunsOn(pkg: PackageJson, platform: LambdaPlatform): boolean {
  return fieldAccepts(pkg.os, platform.os) && fieldAccepts(pkg.cpu, platform.cpu) && fieldAccepts(pkg.libc, platform.libc);
}

class MissingPlatformPackageError extends BundleError {
  override name = 'MissingPlatformPackageError';
}

/**
 * The package directories a native package needs at run time on the platform: its dependencies, and those of
 * its optional dependencies that run there (sharp's @img/sharp-linux-x64 and @img/sharp-libvips-linux-x64).
 * Throws MissingPlatformPackageError when one that runs there is not installed under nodeModules.
 */
export function runtimeClosure(nodeModules: string, roots: string[], platform: LambdaPlatform): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (name: string, optional: boolean): void => {
    if (found.has(name)) return;
    const dir = path.join(nodeModules, name);
    if (!existsSync(path.join(dir, 'package.json'))) {
      if (optional) return;
      throw new MissingPlatformPackageError(`${name} is not installed in ${nodeModules}`);
    }
    const pkg = readPackageJson(dir);
    if (!packageRunsOn(pkg, platform)) return;
    found.set(name, dir);
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dep, true);
  };
  for (const root of roots) visit(root, false);
  // An optional dependency for this platform that npm skipped (another build machine) must be fetched.
  for (const [name, dir] of [...found]) {
    for (const dep of Object.keys(readPackageJson(dir).optionalDependencies ?? {})) {
      if (found.has(dep) || existsSync(path.join(nodeModules, dep, 'package.json'))) continue;
      if (platformSpecificFor(dep, platform)) throw new MissingPlatformPackageError(`${name} needs ${dep} for ${describe(platform)}`);
    }
  }
  return found;
}

/** sharp names its platform packages @img/sharp-<os><libc?>-<cpu> and @img/sharp-libvips-<os><libc?>-<cpu>. */
function platformSpecificFor(name: string, platform: LambdaPlatform): boolean {
  return name.endsWith(`-${platform.os}-${platform.cpu}`);
}

const describe = (p: LambdaPlatform): string => `${p.os}-${p.cpu}-${p.libc}`;

/**
 * node_modules holding the native packages for the platform. The project's own node_modules when it already has
 * them (a linux glibc build machine of the same architecture), otherwise an `npm install --os --cpu --libc` of
 * the same versions into a cache directory, so a macOS or arm64 machine builds the same artifact.
 */
export function nativeModulesFor(packages: string[], platform: LambdaPlatform, projectDir: string): Map<string, string> {
  const projectModules = path.join(projectDir, 'node_modules');
  try {
    return runtimeClosure(projectModules, packages, platform);
  } catch (error) {
    if (!(error instanceof MissingPlatformPackageError)) throw error;
  }
  const specs = packages.map((name) => `${name}@${readPackageJson(path.join(projectModules, name)).version}`);
  const cacheDir = path.join(projectDir, '.build', 'native', `${describe(platform)}-${specs.join('+').replace(/[@/]/g, '_')}`);
  const cachedModules = path.join(cacheDir, 'node_modules');
  if (!existsSync(path.join(cacheDir, '.complete'))) {
    rmSync(cacheDir, { recursive: true, force: true });
    mkdirSync(cacheDir, { recursive: true });
    execFileSync(
      process.platform === 'win32' ? 'npm.cmd' : 'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--omit=dev',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        `--os=${platform.os}`,
        `--cpu=${platform.cpu}`,
        `--libc=${platform.libc}`,
        '--prefix',
        cacheDir,
        ...specs,
      ],
      { stdio: 'inherit' },
    );
    writeFileSync(path.join(cacheDir, '.complete'), specs.join('\n'));
  }
  return runtimeClosure(cachedModules, packages, platform);
}

/** Files of an installed package that a Lambda never reads: docs, type declarations, C/C++ sources. */
const SKIPPED = /\.(md|markdown|d\.ts|d\.mts|d\.cts|map|c|cc|cpp|h|gyp)$/i;

/** prebuilds/<os>-<cpu>/… (node-gyp-build's layout) for another platform than the target. */
export const foreignPrebuild = (file: string, platform: LambdaPlatform): boolean =>
  /^prebuilds\/[^/]+\//.test(file) && !file.startsWith(`prebuilds/${platform.os}-${platform.cpu}/`);

function listFiles(dir: string, base = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, base), { withFileTypes: true })) {
    const rel = base ? `${base}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else if (entry.isFile() && !SKIPPED.test(rel)) out.push(rel);
  }
  return out;
}

/**
 * The AWS SDK's default credential chain, cut to its first link for Lambda (lib/aws/lambda-credentials.ts says why):
 * the chain's other providers and the STS/SSO clients they load are ~140 KB of every function's bundle.
 */
export const LAMBDA_CREDENTIALS_MODULE = 'lib/aws/lambda-credentials.ts';

const lambdaCredentials = (projectDir: string): Plugin => ({
  name: 'lambda-credentials',
  setup(b) {
    b.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({
      path: path.join(projectDir, LAMBDA_CREDENTIALS_MODULE),
    }));
  },
});

/** The module that loads the web app's files (lib/web/bundle.ts): in a bundle, the files built now, embedded. */
export const WEB_BUNDLE_MODULE = 'lib/web/bundle.ts';

const embeddedWebApp = (projectDir: string): Plugin => ({
  name: 'embedded-web-app',
  setup(b) {
    const modulePath = path.join(projectDir, WEB_BUNDLE_MODULE);
    b.onLoad({ filter: /[\\/]lib[\\/]web[\\/]bundle\.ts$/ }, async (args) => {
      if (path.resolve(args.path) !== modulePath) return undefined;
      const bundle = await buildWebBundle(projectDir);
      return { contents: `const bundle = ${JSON.stringify(bundle)};\nexport const loadWebBundle = async () => bundle;\n`, loader: 'js' };
    });
  },
});

/** An AWS SDK client's generated operation and shape schemas (@aws-sdk/client-x/dist-es/schemas/schemas_N.js). */
export const SDK_SCHEMA_MODULE = /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/;

/**
 * The SDK writes its schemas' HTTP traits with computed keys naming module constants (`{ [_hH]: _xaa }`, where
 * `const _hH = "httpHeader"`). esbuild cannot prove such a key free of side effects, so it keeps every schema that
 * has one and all they reference: S3's whole service model, ~60 KB, in any bundle with an S3 client. Writing each
 * constant's string in place of its name is the same code, and leaves only the operations a function sends.
 */
export function inlineSchemaKeys(source: string): string {
  const strings = new Map<string, string>();
  for (const m of source.matchAll(/^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm)) strings.set(m[1]!, m[2]!);
  return source.replace(/([{,]\s*)\[(_\w+)\]:/g, (all, before: string, name: string) => {
    const literal = strings.get(name);
    return literal === undefined ? all : `${before}${literal}:`;
  });
}

export const treeShakableSchemas: Plugin = {
  name: 'tree-shakable-sdk-schemas',
  setup(b) {
    b.onLoad({ filter: SDK_SCHEMA_MODULE }, (args) => ({ contents: inlineSchemaKeys(readFileSync(args.path, 'utf8')), loader: 'js' }));
  },
};

/**
 * Each SDK client's runtime config imports its whole package.json (`import packageInfo from "../package.json"`) for
 * `packageInfo.version`, the user agent's client version; esbuild keeps a default-imported JSON whole (~2.4 KB a
 * client). The bundle gets the name and version only.
 */
export const sdkPackageVersions: Plugin = {
  name: 'sdk-package-versions',
  setup(b) {
    b.onLoad({ filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]package\.json$/ }, (args) => {
      const { name, version } = JSON.parse(readFileSync(args.path, 'utf8')) as PackageJson;
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

/**
 * The tracer's X-Ray SDK (aws-xray-sdk-core, through cls-hooked) requires `semver` for one call each, `semver.gte` on
 * a plain version: the whole package is ~28 KB of every traced bundle. Those two importers get SEMVER_GTE_MODULE
 * instead; any other importer gets semver itself.
 */
export const SEMVER_GTE_MODULE = 'lib/aws/semver-gte.cjs';

export const semverGteOnly = (projectDir: string): Plugin => ({
  name: 'semver-gte-only',
  setup(b) {
    b.onResolve({ filter: /^semver$/ }, (args) =>
      /[\\/]node_modules[\\/](cls-hooked|aws-xray-sdk-core)[\\/]/.test(args.importer)
        ? { path: path.join(projectDir, SEMVER_GTE_MODULE) }
        : undefined,
    );
  },
});

/** Where the osls plugin writes artifacts, relative to the service directory. */
export const ARTIFACT_DIR = '.build/artifacts';

export const metafilePath = (outDir: string, name: string): string => path.join(outDir, `${name}.meta.json`);

/**
 * esbuild's options for a function's bundle: what `npm run package` ships. A bench that measures code as it runs on
 * Lambda bundles its own entry with them (bench/export.bench.ts).
 */
export function functionBuildOptions(
  projectDir: string,
  entry: string,
  outfile: string,
  nodeTarget: string,
): BuildOptions & { metafile: true; write: false } {
  return {
    absWorkingDir: projectDir,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: nodeTarget,
    format: 'cjs',
    // ESM entry points first: the AWS SDK and middy tree-shake far better than their CJS builds.
    mainFields: ['module', 'main'],
    minify: true,
    // No keepNames (it costs ~7% of a bundle): readable stack traces come from the linked source map instead, which
    // Lambda's Node applies with --enable-source-maps (serverless.yml). Error classes name themselves explicitly.
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    external: [...NATIVE_PACKAGES],
    plugins: [
      lambdaCredentials(projectDir),
      embeddedWebApp(projectDir),
      treeShakableSchemas,
      sdkPackageVersions,
      semverGteOnly(projectDir),
    ],
    metafile: true,
    write: false,
    logLevel: 'warning',
  };
}

export async function bundleFunction(req: BundleRequest): Promise<BundleResult> {
  const { source, output } = handlerPaths(req.handler);
  const entry = path.join(req.projectDir, source);
  if (!existsSync(entry)) throw new BundleError(`function ${req.name}: handler source ${source} does not exist`);

  const result = await build(functionBuildOptions(req.projectDir, entry, path.join(req.outDir, req.name, output), req.nodeTarget));
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  if (!js) throw new BundleError(`function ${req.name}: esbuild produced no JavaScript`);

  const natives = importedExternals(result.metafile);
  const map = result.outputFiles.find((f) => f.path.endsWith('.js.map'));
  const entries: { name: string; data: Buffer }[] = [{ name: output, data: Buffer.from(js.contents) }];
  if (map) entries.push({ name: `${output}.map`, data: Buffer.from(map.contents) });
  entries.push(...extraEntries(req.projectDir, result.metafile, output));
  if (natives.length > 0) {
    const platform = lambdaPlatform(req.architecture);
    const modules = nativeModulesFor(natives, platform, req.projectDir);
    for (const [name, dir] of modules) {
      for (const file of listFiles(dir).filter((f) => !foreignPrebuild(f, platform))) {
        entries.push({ name: `node_modules/${name}/${file}`, data: readFileSync(path.join(dir, file)) });
      }
    }
  }

  mkdirSync(req.outDir, { recursive: true });
  const artifact = path.join(req.outDir, `${req.name}.zip`);
  await writeZip(artifact, entries);
  // What went into the bundle: the deploy tests read it to check the function's IAM role against its code.
  writeFileSync(metafilePath(req.outDir, req.name), JSON.stringify(result.metafile));
  return {
    name: req.name,
    artifact,
    bundleBytes: js.contents.byteLength,
    artifactBytes: statSync(artifact).size,
    nativePackages: natives,
  };
}
