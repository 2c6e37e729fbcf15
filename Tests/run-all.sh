#!/usr/bin/env bash
# Runs every test of PassBridge: the citation check (no file cites a document the repository lacks), the Swift
# format lint (.swift-format), the type checks of the clients (mypy --strict, tsc), the Swift tests (XCTest), then
# the end-to-end pytest suites against the real binaries. Installs missing dependencies first.
#
# The Python test tools live in a virtual environment of their own (.venv-tests, or $PASSBRIDGE_TEST_VENV),
# made from the python3 on PATH; nothing is installed into that interpreter (PEP 668). The tests run with a
# scratch XDG_STATE_HOME, so they neither read nor change the store of the user running them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Tests/install-deps.sh --with-test-tools
bash Tests/check-citations.sh
swift format lint --strict --recursive --parallel Sources Tests Plugins Bench/Sources Package.swift

venv=${PASSBRIDGE_TEST_VENV:-$PWD/.venv-tests}
if ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r Tests/python/requirements.txt
python="$venv/bin/python"

"$python" -m mypy --strict --no-error-summary Clients/python/passbridge Clients/python/examples
tsc -p Clients/node

swift build --build-tests
swift test --skip-build --disable-swift-testing

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
XDG_STATE_HOME="$scratch" PASSBRIDGE_BIN_DIR="$(swift build --show-bin-path)" "$python" -m pytest -q Tests/python
