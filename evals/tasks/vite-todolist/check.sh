#!/usr/bin/env bash
# A Vite + React app with a TodoList that builds. Needs no network: it builds with the
# node_modules the agent installed.
set -uo pipefail
app=""
for pkg in */package.json package.json; do
  [ -f "$pkg" ] || continue
  if grep -q '"react"' "$pkg" && grep -q '"vite"' "$pkg"; then app="$(dirname "$pkg")"; break; fi
done
[ -n "$app" ] || { echo "no package.json with react and vite"; exit 1; }
[ -d "$app/node_modules" ] || { echo "$app has no node_modules: the dependencies were not installed"; exit 1; }
src="$(cat "$app"/src/*.tsx "$app"/src/*.jsx "$app"/src/*/*.tsx "$app"/src/*/*.jsx 2>/dev/null)"
for word in todo localStorage; do
  grep -qi "$word" <<<"$src" || { echo "the app's components never mention $word"; exit 1; }
done
grep -qiE "filter|completed|done" <<<"$src" || { echo "the app has no way to tell done todos from open ones"; exit 1; }
(cd "$app" && npm run build --silent) || { echo "npm run build fails in $app"; exit 1; }
[ -f "$app/dist/index.html" ] || { echo "the build made no dist/index.html"; exit 1; }
echo ok
