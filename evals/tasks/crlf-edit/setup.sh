#!/usr/bin/env bash
# The file is made here, not stored, so no git setting can turn its CRLF line endings into LF.
set -euo pipefail
printf '; Settings of the sync service\r\n[server]\r\nhost=0.0.0.0\r\nport=8080\r\n\r\n[log]\r\nlevel=info\r\nfile=C:\\ProgramData\\sync\\sync.log\r\n' > service.ini
printf '# sync service\n\nConfiguration lives in service.ini.\n' > README.md
