#!/usr/bin/env bash
# The seed's flagship task starts from an empty folder.
exit 0
