#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine with the Swift toolchain lacks to build and test PassBridge.
# Idempotent; needs root (or sudo) for apt-get.
set -euo pipefail
apt_packages=(libjansson-dev libmicrohttpd-dev libsqlite3-dev libpq-dev libssl-dev pkg-config postgresql socat strace)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${1:-}" = "--with-test-tools" ]; then
  python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/python/requirements.txt"
fi
