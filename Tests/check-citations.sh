#!/usr/bin/env bash
# Fails when a tracked file cites a document the repository does not contain: the team's design and reference
# notes, a folder outside the clone, or an issue of the team's tracker. Cite ARCHITECTURE.md, Protocol/README.md,
# a module's README, or a public page by its title instead, or state the fact itself. Prints each citation as
# FILE:LINE:TEXT. Called by Tests/run-all.sh; test_repository.py shows which spellings it catches.
set -euo pipefail
cd "$(dirname "$0")/.."
# Assembled from pieces so that this file, which names what it forbids, does not cite it.
notes='(adobe-pass-sdk|jsonrpc|rest-api-v2|swift-linux)-''notes|apple-sso-''cookbook'
outside='\.\./''shared|shared/''reference'
pattern="DES""IGN(\\.md|[[:space:]]*§)|$notes|$outside|[Ii]ssues? [0-9]+"
if git grep -n -I -E "$pattern" -- .; then
  echo "check-citations: the lines above cite documents the repository does not contain" >&2
  exit 1
fi
