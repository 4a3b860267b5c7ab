#!/usr/bin/env bash
# service.ini holds the new values and nothing else changed, CRLF line endings included.
set -euo pipefail
printf '; Settings of the sync service\r\n[server]\r\nhost=0.0.0.0\r\nport=9090\r\n\r\n[log]\r\nlevel=debug\r\nfile=C:\\ProgramData\\sync\\sync.log\r\n' > "$EVAL_WORKSPACE/../expected.ini"
if ! cmp -s service.ini "$EVAL_WORKSPACE/../expected.ini"; then
  echo "service.ini is not as expected (od -c below):"
  od -c service.ini | head -20
  exit 1
fi
echo ok
