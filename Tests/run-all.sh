#!/usr/bin/env bash
# Runs every test of PassBridge: the Swift tests (XCTest), then the end-to-end pytest suites
# against the real binaries. Installs missing dependencies first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Tests/install-deps.sh --with-test-tools
swift build --build-tests
swift test --skip-build --disable-swift-testing
PASSBRIDGE_BIN_DIR="$(swift build --show-bin-path)" python3 -m pytest -q Tests/python
