#!/usr/bin/env bash
# The tests exist and pass on src/queue.js, and fail on each broken copy in mutants/ (so they test something).
set -uo pipefail
[ -f test/queue.test.js ] || { echo "test/queue.test.js is missing"; exit 1; }
cmp -s src/queue.js "$EVAL_TASK_DIR/workspace/src/queue.js" || { echo "src/queue.js was changed"; exit 1; }
node --test test/queue.test.js >/dev/null 2>&1 || { echo "the tests fail on the real queue:"; node --test test/queue.test.js 2>&1 | tail -20; exit 1; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for mutant in "$EVAL_TASK_DIR"/mutants/*.js; do
  rm -rf "$scratch/ws" && mkdir "$scratch/ws" && cp -r package.json src test "$scratch/ws/"
  cp "$mutant" "$scratch/ws/src/queue.js"
  if (cd "$scratch/ws" && node --test test/queue.test.js >/dev/null 2>&1); then
    echo "the tests pass on a broken queue ($(basename "$mutant")): they miss that case"
    exit 1
  fi
done
echo ok
