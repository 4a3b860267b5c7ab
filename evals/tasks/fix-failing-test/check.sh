#!/usr/bin/env bash
# The tests pass and are the ones the task started with.
set -euo pipefail
cmp -s test/stats.test.js "$EVAL_TASK_DIR/workspace/test/stats.test.js" || { echo "test/stats.test.js was changed"; exit 1; }
node --test
