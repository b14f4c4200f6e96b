import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// `npm ci` installs package-lock.json exactly and refuses a lock that has drifted from package.json or that lacks a
// platform's optional binary (swc's and sharp's for darwin, win32, musl...). These say which entry is wrong before
// a clean clone finds out.
const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
interface LockedPackage {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockedPackage>;
};

/** The lock entry that node's resolution would find for `name` required from the package at `from`. */
function resolve(from: string, name: string): LockedPackage | undefined {
  let dir = from;
  for (;;) {
    const found = lock.packages[`${dir ? `${dir}/` : ''}node_modules/${name}`];
    if (found) return found;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  test('records the same dependencies and devDependencies as package.json', () => {
    expect(lock.packages['']?.dependencies).toEqual(manifest.dependencies);
    expect(lock.packages['']?.devDependencies).toEqual(manifest.devDependencies);
  });

  test('locks every direct dependency at the exact version package.json pins', () => {
    const pins = { ...manifest.dependencies, ...manifest.devDependencies };
    const wrong = Object.entries(pins).filter(([name, pin]) => lock.packages[`node_modules/${name}`]?.version !== pin);
    expect(wrong).toEqual([]);
  });

  test("lists every platform's optional binary that a locked package names, as npm ci needs", () => {
    expect(lock.lockfileVersion).toBeGreaterThanOrEqual(3);
    const missing: string[] = [];
    for (const [at, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolve(at, name)) missing.push(`${name} (for ${at || 'the root'})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
