#!/usr/bin/env bash
# The generated file exists with the version from package.json.
set -uo pipefail
[ -f src/version.js ] || { echo "src/version.js was not generated"; exit 1; }
[ "$(cat src/version.js)" = 'export const VERSION = "4.2.1";' ] || { echo "src/version.js holds: $(cat src/version.js)"; exit 1; }
echo ok
