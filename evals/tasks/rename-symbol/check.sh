#!/usr/bin/env bash
# No getUserName left anywhere, getDisplayName exported and used, the tests still pass.
set -euo pipefail
if grep -rn --exclude-dir=.mini-cursor "getUserName" .; then echo "getUserName is still there (above)"; exit 1; fi
grep -q "export function getDisplayName" src/users.js || { echo "src/users.js does not export getDisplayName"; exit 1; }
for f in src/greeting.js src/report.js test/users.test.js; do
  grep -q "getDisplayName" "$f" || { echo "$f does not use getDisplayName"; exit 1; }
done
node --test
