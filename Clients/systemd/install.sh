#!/usr/bin/env bash
# Builds the passbridge daemon in release mode and installs it with its systemd units (README.md next to this file).
#
#   Clients/systemd/install.sh [--root DIR] [--software-statement FILE]
#
# Run from a clone of the repository, as root. Steps: `swift build -c release --static-swift-stdlib` (stripped) of
# the products passbridge and passbridge-relay (what Clients/shell/passbridge-call uses to reach the socket); both binaries to /usr/local/bin; the sysusers file to /usr/lib/sysusers.d and `systemd-sysusers` (the passbridge user and
# group); /etc/passbridge (0700) and, with --software-statement, the statement as /etc/passbridge/software-statement
# (0600); the units to /etc/systemd/system; `systemctl enable --now passbridge.socket`.
# --root DIR installs into DIR instead of / (an image being built, or a test): the units are enabled in DIR and
# nothing is started.
set -euo pipefail

usage_error() {
    echo "install.sh: $1 (see the comment at the top of Clients/systemd/install.sh)" >&2
    exit 2
}

root=""
statement=""
while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ $# -ge 2 ] || usage_error "--root needs a directory"; root=$2; shift 2 ;;
        --software-statement) [ $# -ge 2 ] || usage_error "--software-statement needs a file"; statement=$2; shift 2 ;;
        *) usage_error "unknown argument $1" ;;
    esac
done
[ -z "$statement" ] || [ -r "$statement" ] || usage_error "cannot read the software statement file $statement"
[ -n "$root" ] || [ "$(id -u)" = 0 ] || { echo "install.sh: run as root (or with --root DIR)" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
# The Swift runtime linked in, symbols stripped: the binaries need only the C libraries' runtime packages.
static=(-c release --static-swift-stdlib -Xlinker --strip-all --disable-local-rpath)
swift build "${static[@]}" --product passbridge
swift build "${static[@]}" --product passbridge-relay
bin="$(swift build -c release --show-bin-path)"

install -D -m 0755 "$bin/passbridge" "$root/usr/local/bin/passbridge"
install -D -m 0755 "$bin/passbridge-relay" "$root/usr/local/bin/passbridge-relay"
install -D -m 0644 "$here/passbridge.sysusers.conf" "$root/usr/lib/sysusers.d/passbridge.conf"
install -d "$root/etc"
if [ -n "$root" ]; then systemd-sysusers --root="$root"; else systemd-sysusers; fi
install -d -m 0700 "$root/etc/passbridge"
[ -z "$statement" ] || install -m 0600 "$statement" "$root/etc/passbridge/software-statement"
install -D -m 0644 "$here/passbridge.socket" "$root/etc/systemd/system/passbridge.socket"
install -D -m 0644 "$here/passbridge.service" "$root/etc/systemd/system/passbridge.service"
if [ -n "$root" ]; then
    systemctl --root="$root" enable passbridge.socket
else
    systemctl daemon-reload
    systemctl enable --now passbridge.socket
fi
echo "installed $("$root/usr/local/bin/passbridge" --version) into ${root:-/}"
