#!/usr/bin/env bash
# Runs every test of PassBridge: the citation check (no file cites a document the repository lacks), the Swift
# format lint (.swift-format), the type checks of the clients (mypy --strict, tsc), the Swift tests (XCTest), then
# the end-to-end pytest suites against the real binaries. Installs missing dependencies first.
#
# The Python test tools live in a virtual environment of their own (.venv-tests, or $PASSBRIDGE_TEST_VENV),
# made from the python3 on PATH; nothing is installed into that interpreter (PEP 668). The tests run with a
# scratch XDG_STATE_HOME, so they neither read nor change the store of the user running them.
#
# Each stage ends with one line, "== NAME: N s" (a failed one with "== NAME: failed (exit S) after N s", and the run
# stops there); pytest adds one line per suite (Tests/python/conftest.py) and lists why each skipped test was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

# stage NAME COMMAND...: runs COMMAND and prints how long it took.
stage() {
  local name=$1 begun=$SECONDS status=0
  shift
  "$@" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "== $name: failed (exit $status) after $((SECONDS - begun)) s" >&2
    exit "$status"
  fi
  echo "== $name: $((SECONDS - begun)) s"
}

venv=${PASSBRIDGE_TEST_VENV:-$PWD/.venv-tests}
python="$venv/bin/python"
test_venv() {
  if ! "$python" -c 'import sys' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
  "$python" -m pip install -q --disable-pip-version-check -r Tests/python/requirements.txt
}

# XCTest without a line per test or suite started or passed: what is left is each failure, each skip and its
# reason, what the code under test logged, and the last count ("Executed 254 tests, with 3 tests skipped …").
xctest() {
  swift test --skip-build --disable-swift-testing 2>&1 | awk '
    /^Test (Case|Suite) .* (started at|passed)/ { next }
    /^[[:space:]]+Executed / { count = $0; next }
    { print; fflush() }
    END { if (count != "") print count }'
  return "${PIPESTATUS[0]}"
}

scratch=$(mktemp -d)
trap '[ -z "${venv_maker:-}" ] || kill "$venv_maker" 2>/dev/null; rm -rf "$scratch"' EXIT
pytest_suites() {
  # -rs: the reason of every skip, grouped, in the summary at the end. Two workers (pytest-xdist; one per core of
  # the CI machine, PASSBRIDGE_TEST_WORKERS to change), each running whole files: a file's module fixtures (the
  # release build and .deb of test_packages.py) are made once, and its tests keep their order. Files are handed out
  # in the order of collection, the longest first (conftest.py, LONGEST_FIRST).
  XDG_STATE_HOME="$scratch" PASSBRIDGE_BIN_DIR="$(swift build --show-bin-path)" "$python" -m pytest -q -rs \
    -n "${PASSBRIDGE_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder Tests/python
}

stage "dependencies" bash Tests/install-deps.sh --with-test-tools
stage "citations" bash Tests/check-citations.sh
stage "swift format" swift format lint --strict --recursive --parallel Sources Tests Plugins Bench/Sources Package.swift
# The test venv is made while Swift builds: pip mostly waits on the network, the compiler uses both cores. Its
# stage line gives the time it was still waited for after the build; its output is shown if it fails.
test_venv >"$scratch/venv.log" 2>&1 &
venv_maker=$!
venv_ready() {
  local status=0
  wait "$venv_maker" || status=$?
  venv_maker=
  if [ "$status" -ne 0 ]; then cat "$scratch/venv.log" >&2; else cat "$scratch/venv.log"; fi
  return "$status"
}
stage "swift build" swift build --build-tests
stage "test venv" venv_ready
stage "mypy" "$python" -m mypy --strict --no-error-summary Clients/python/passbridge Clients/python/examples
stage "tsc" tsc -p Clients/node
stage "XCTest" xctest
stage "pytest" pytest_suites
echo "== all: $((SECONDS - started)) s"
