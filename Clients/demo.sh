#!/usr/bin/env bash
# PassBridge end to end on this machine: installs what is missing, builds, and runs the demo
# (Clients/python/examples/demo.py) against the Adobe Pass emulator. Pass --second-screen for the set-top
# variant; other arguments go to the demo too. Exit status: the demo's (0 = every step did what it should).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Tests/install-deps.sh
if [ -d .build ]; then
  echo "demo.sh: swift build" >&2
else
  echo "demo.sh: swift build (a first build takes a few minutes)" >&2
fi
build_log="$(mktemp)"
if ! swift build >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  echo "demo.sh: swift build failed" >&2
  exit 1
fi
rm -f "$build_log"
bin_dir="$(swift build --show-bin-path)"
exec python3 Clients/python/examples/demo.py --bin-dir "$bin_dir" "$@"
