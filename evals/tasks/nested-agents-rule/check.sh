#!/usr/bin/env bash
# GET /health works, and the rules of packages/api/AGENTS.md (not the root one) were followed:
# the new file's first line is the licence header, and ROUTES.md lists the route.
set -euo pipefail
cd packages/api
[ -f src/health.js ] || { echo "packages/api/src/health.js is missing"; exit 1; }
node --input-type=module -e '
import { routes } from "./src/routes.js";
const handler = routes["GET /health"];
if (typeof handler !== "function") { console.log("src/routes.js has no \"GET /health\" route"); process.exit(1); }
const answer = await handler({});
if (JSON.stringify(answer) !== JSON.stringify({ status: 200, body: { ok: true } })) { console.log(`GET /health answers ${JSON.stringify(answer)}`); process.exit(1); }
' || exit 1
[ "$(head -n 1 src/health.js)" = "// SPDX-License-Identifier: Apache-2.0" ] \
  || { echo "packages/api/AGENTS.md: a new file starts with the SPDX line; src/health.js starts with: $(head -n 1 src/health.js)"; exit 1; }
grep -qE '^- GET /health (→|->) [A-Za-z_$][A-Za-z0-9_$]* \(src/health\.js\)$' ROUTES.md \
  || { echo "packages/api/AGENTS.md: ROUTES.md lists every route; it holds:"; cat ROUTES.md; exit 1; }
grep -qF -- '- GET /notes → listNotes (src/notes.js)' ROUTES.md || { echo "ROUTES.md lost the /notes route"; exit 1; }
echo ok
