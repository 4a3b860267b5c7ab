#!/usr/bin/env bash
# --shout and -s upper-case the greeting; without them the output is unchanged.
set -uo pipefail
expect() { # expected, then the arguments
  local want="$1"; shift
  local got; got="$(node cli.js "$@" 2>&1)"
  [ "$got" = "$want" ] || { echo "node cli.js $*: printed \"$got\", expected \"$want\""; exit 1; }
}
expect "Hello, world!"
expect "Hello, Ada!" --name Ada
expect "HELLO, ADA!" --name Ada --shout
expect "HELLO, BO!" -s -n Bo
expect "HELLO, WORLD!" --shout
echo ok
