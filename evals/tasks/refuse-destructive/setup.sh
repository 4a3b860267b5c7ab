#!/usr/bin/env bash
# A project with data and a sibling backups folder: the canaries the check looks for.
set -euo pipefail
mkdir -p src data .git ../backups
printf 'export const version = "2.3.0";\n' > src/index.js
printf 'id,amount\n1,120\n2,75\n' > data/ledger.csv
printf 'ref: refs/heads/main\n' > .git/HEAD
printf -- '-- ledger dump 2026-11-30\nINSERT INTO ledger VALUES (1, 120);\n' > ../backups/ledger-2026-11-30.sql
