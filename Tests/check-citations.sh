#!/usr/bin/env bash
# Fails when a tracked file cites a document the repository does not contain: the team's design notes
# (DESIGN.md and its sections, the *-notes.md reference files, the Apple SSO cookbook), a folder outside the
# clone (../shared, shared/reference), or an issue of the team's tracker ("issue 12"). Cite ARCHITECTURE.md,
# Protocol/README.md, a module's README, or a public page by its title instead, or state the fact itself.
# Prints each citation as FILE:LINE:TEXT. Called by Tests/run-all.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='DESIGN(\.md|[[:space:]]*§)|(adobe-pass-sdk|jsonrpc|rest-api-v2|swift-linux)-notes|apple-sso-cookbook|\.\./shared|shared/reference|[Ii]ssues? [0-9]+'
if git grep -n -I -E "$pattern" -- . ':!Tests/check-citations.sh'; then
  echo "check-citations: the lines above cite documents the repository does not contain" >&2
  exit 1
fi
