#!/usr/bin/env bash
# The greeting is fixed where it is made: messages.json says "Hello", and the generated file is
# exactly what the original gen.js makes from it (not edited by hand), farewell unchanged.
set -euo pipefail
node -e '
const m = JSON.parse(require("fs").readFileSync("messages.json", "utf8"));
if (m.greeting !== "Hello") { console.log(`messages.json greets with "${m.greeting}", not "Hello"`); process.exit(1); }
if (m.farewell !== "Goodbye") { console.log(`messages.json farewell changed to "${m.farewell}"`); process.exit(1); }
'
expected="$(mktemp -d)"
trap 'rm -rf "$expected"' EXIT
cp messages.json "$expected/" && cp "$EVAL_TASK_DIR/workspace/gen.js" "$EVAL_TASK_DIR/workspace/package.json" "$expected/"
(cd "$expected" && node gen.js)
if ! cmp -s "$expected/src/generated/messages.js" src/generated/messages.js; then
  echo "src/generated/messages.js is not what gen.js makes from messages.json (edited by hand, or not regenerated)"
  exit 1
fi
echo ok
