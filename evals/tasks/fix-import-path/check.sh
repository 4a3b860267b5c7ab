#!/usr/bin/env bash
# node src/index.js runs and prints the list.
set -uo pipefail
out="$(node src/index.js 2>&1)" || { echo "node src/index.js fails:"; echo "$out" | head -8; exit 1; }
expected=$'Green Apples x6\nOat Milk x2\nBread x1\nTotal: 9 items'
[ "$out" = "$expected" ] || { echo "unexpected output:"; echo "$out"; exit 1; }
echo ok
