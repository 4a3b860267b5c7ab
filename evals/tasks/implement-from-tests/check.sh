#!/usr/bin/env bash
# The tests pass and are the ones the task started with.
set -euo pipefail
cmp -s test/slugify.test.js "$EVAL_TASK_DIR/workspace/test/slugify.test.js" || { echo "test/slugify.test.js was changed"; exit 1; }
node --test
