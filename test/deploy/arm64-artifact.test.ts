// The ingest artifact built for arm64 Lambda (serverless.yml `architecture: arm64`) on this x86-64 machine: its native
// binaries are all aarch64 (sharp's from its linux-arm64 packages, XXH3's linux-arm64 prebuild) and none is x86-64.
// Checked offline on the ELF headers: an arm64 binary cannot be loaded here.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleFunction } from '../../scripts/bundle';
import { extractZip } from '../../scripts/zip';
import { ROOT } from './packaged';

/** ELF e_machine values. */
const EM_X86_64 = 0x3e;
const EM_AARCH64 = 0xb7;

let outDir: string;
let dir: string;
let files: string[];

function walk(root: string, base = ''): string[] {
  return readdirSync(path.join(root, base)).flatMap((name) => {
    const rel = base ? `${base}/${name}` : name;
    return statSync(path.join(root, rel)).isDirectory() ? walk(root, rel) : [rel];
  });
}

/** The machine an ELF shared object is built for, or undefined when the file is no ELF. */
function elfMachine(file: string): number | undefined {
  const head = readFileSync(file).subarray(0, 20);
  if (head.length < 20 || head.readUInt32BE(0) !== 0x7f454c46) return undefined;
  return head.readUInt16LE(18);
}

beforeAll(async () => {
  outDir = mkdtempSync(path.join(tmpdir(), 'icecat-arm64-build-'));
  dir = mkdtempSync(path.join(tmpdir(), 'icecat-arm64-artifact-'));
  const built = await bundleFunction({
    name: 'ingest',
    handler: 'functions/ingest/handler.handler',
    architecture: 'arm64',
    nodeTarget: 'node22',
    projectDir: ROOT,
    outDir,
  });
  await extractZip(built.artifact, dir);
  files = walk(dir);
}, 300_000);

afterAll(() => {
  for (const d of [outDir, dir]) if (d) rmSync(d, { recursive: true, force: true });
});

it('ships sharp and libvips for linux-arm64, and no x64 package', () => {
  expect(files).toContain('functions/ingest/handler.js');
  expect(files.some((f) => /^node_modules\/@img\/sharp-linux-arm64\/lib\/sharp-linux-arm64-[\d.]+\.node$/.test(f))).toBe(true);
  expect(files.some((f) => /^node_modules\/@img\/sharp-libvips-linux-arm64\/lib\/libvips-cpp\.so/.test(f))).toBe(true);
  expect(files.filter((f) => /x64|x86/.test(f))).toEqual([]);
});

it("keeps only XXH3's linux-arm64 prebuild", () => {
  const prebuilds = readdirSync(path.join(dir, 'node_modules', 'xxhash-addon', 'prebuilds'));
  expect(prebuilds).toEqual(['linux-arm64']);
  expect(files).toContain('node_modules/xxhash-addon/prebuilds/linux-arm64/addon.napi.glibc.node');
});

it('holds native binaries built for aarch64 only', () => {
  const binaries = files.filter((f) => /\.node$|\.so(\.\d+)*$/.test(f));
  const machines = Object.fromEntries(binaries.map((f) => [f, elfMachine(path.join(dir, f))]));
  expect(binaries.length).toBeGreaterThanOrEqual(3);
  expect(Object.entries(machines).filter(([, m]) => m !== EM_AARCH64)).toEqual([]);
  expect(Object.values(machines)).not.toContain(EM_X86_64);
});
