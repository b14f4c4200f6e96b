// What the bundles give the tracer's X-Ray SDK and cls-hooked for `require('semver')` (scripts/bundle.ts
// semverGteOnly): each calls only semver.gte, on a plain version (Node's, the AWS SDK v2's), and semver itself is
// ~28 KB of every traced bundle. test/unit/bundle-semver.test.ts compares it with semver.
function parts(v) {
  const m = /^\s*v?(\d+)\.(\d+)\.(\d+)/.exec(String(v));
  if (!m) throw new TypeError(`Invalid Version: ${v}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

exports.gte = function gte(a, b) {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return true;
};
