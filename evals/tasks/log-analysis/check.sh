#!/usr/bin/env bash
# /api/search has the most 5xx (18, spread over many query strings); /api/orders (13) is what a count that keeps the query strings finds.
set -uo pipefail
[ -f answer.txt ] || { echo "answer.txt is missing"; exit 1; }
answer="$(tr -d '[:space:]' < answer.txt)"
[ "$answer" = "/api/search" ] || { echo "answer.txt says \"$answer\", expected /api/search"; exit 1; }
echo ok
