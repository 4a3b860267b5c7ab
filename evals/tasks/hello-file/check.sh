#!/usr/bin/env bash
# hello.txt holds exactly "Hello" (a final newline is fine).
set -euo pipefail
[ -f hello.txt ] || { echo "hello.txt is missing"; exit 1; }
content="$(cat hello.txt)"
[ "$content" = "Hello" ] || { echo "hello.txt holds \"$content\", not \"Hello\""; exit 1; }
