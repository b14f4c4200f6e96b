#!/usr/bin/env bash
# The checks `npm test` runs before jest, at once: the type check and the lint each use one core. Each one's output is
# printed whole when it ends, and the script fails when any of them failed.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run -s typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
npm run -s lint >"$out/lint" 2>&1 &
lint=$!
npm run -s format:check >"$out/format" 2>&1
format=$?
wait "$typecheck"
typecheck=$?
wait "$lint"
lint=$?
status=0
for check in typecheck lint format; do
  code=${!check}
  echo "== $check: $([ "$code" -eq 0 ] && echo ok || echo "failed ($code)")"
  [ "$code" -eq 0 ] || { cat "$out/$check"; status=1; }
done
exit $status
