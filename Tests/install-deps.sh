#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine with the Swift toolchain lacks to build and test PassBridge.
# binutils (readelf, objdump) and python3 are what Clients/debian/build-deb.sh and Clients/python/build-wheel.sh
# use besides the toolchain. Idempotent; needs root (or sudo) for apt-get; never asks (DEBIAN_FRONTEND=noninteractive, no stdin needed).
#   --with-test-tools   also the test tools: python3-venv (for the virtual environment Tests/run-all.sh makes;
#                       nothing is installed into the system Python), Node.js with Debian's TypeScript compiler
#                       (tsc checks Clients/node), systemd (systemd-analyze and systemd-socket-activate check
#                       Clients/systemd), lintian (checks the .deb), shellcheck (checks every shell file) and
#                       valgrind (callgrind counts the instructions of the transport's linear-work test);
#                       the Python test tools are in Tests/python/requirements.txt
set -euo pipefail
apt_packages=(libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libpq-dev libssl-dev pkg-config postgresql socat strace binutils python3)
if [ "${1:-}" = "--with-test-tools" ]; then
  apt_packages+=(python3-venv nodejs node-typescript systemd lintian shellcheck valgrind)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" </dev/null >/dev/null
fi
