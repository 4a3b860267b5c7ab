#!/usr/bin/env bash
# Both changes are in src/config.js (neither lost to the other), and everything else is as it was.
set -euo pipefail
env -i PATH="$PATH" node --input-type=module -e '
import * as c from "./src/config.js";
const want = { host: "127.0.0.1", port: 8080, pageSize: 50, requestTimeoutMs: 30000, logLevel: "info" };
const wrong = Object.entries(want).filter(([k, v]) => c[k] !== v).map(([k, v]) => `${k} is ${JSON.stringify(c[k])}, expected ${JSON.stringify(v)}`);
if (wrong.length) { console.log(wrong.join("\n")); process.exit(1); }
' || exit 1
# Only the two default values changed: the lines that hold them, and no other line.
diff <(grep -vE 'NOTES_PORT|NOTES_REQUEST_TIMEOUT_MS' src/config.js) <(grep -vE 'NOTES_PORT|NOTES_REQUEST_TIMEOUT_MS' "$EVAL_TASK_DIR/workspace/src/config.js") >/dev/null \
  || { echo "src/config.js changed beyond the port and the timeout:"; diff "$EVAL_TASK_DIR/workspace/src/config.js" src/config.js | head -20; exit 1; }
echo ok
