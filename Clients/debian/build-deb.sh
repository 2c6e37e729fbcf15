#!/usr/bin/env bash
# Builds the Debian package of PassBridge from this repository, offline, with dpkg-deb:
#
#   Clients/debian/build-deb.sh [--out DIR] [--no-build]
#
# Contents: the static, stripped daemon and relay (`swift build -c release --static-swift-stdlib -Xlinker
# --strip-all --disable-local-rpath`: no RUNPATH, so nothing beside /usr/bin is searched for a shared object) as
# /usr/bin/passbridge and /usr/bin/passbridge-relay; Clients/shell/passbridge-call as
# /usr/bin/passbridge-call; the systemd units of Clients/systemd (ExecStart= pointed at /usr/bin) in
# /usr/lib/systemd/system and their sysusers file as /usr/lib/sysusers.d/passbridge.conf; a man page for each
# command written from its --help (help2roff.py); the docs, the machine-readable copyright and the native
# changelog in /usr/share/doc/passbridge. The version is
# info.version of Protocol/openrpc.json (the one version of PassBridge). Depends: is the packages of the shared
# objects the binaries need (readelf -d) plus the two the daemon opens with dlopen (libcurl, libcrypto); a soname
# missing from the table below fails the build; so does a binary with a RUNPATH or RPATH. The maintainer scripts
# (maintainer-scripts/) create the passbridge user, enable passbridge.socket and start it only when systemd is
# running, with deb-systemd-helper and deb-systemd-invoke as debhelper's snippets do. `lintian` on the result
# reports no error and no warning (Tests/python/test_packages.py).
#
# --out DIR: where the .deb goes (default .build/packages). --no-build: package the release binaries already in
# `swift build -c release --show-bin-path` (they must be the static build). Prints the .deb's path last.
set -euo pipefail

usage_error() {
    echo "build-deb.sh: $1 (see the comment at the top of Clients/debian/build-deb.sh)" >&2
    exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="$repo/.build/packages"
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || usage_error "--out needs a directory"; out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        *) usage_error "unknown argument $1" ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$repo"

if [ "$build" = 1 ]; then
    static=(-c release --static-swift-stdlib -Xlinker --strip-all --disable-local-rpath)
    swift build "${static[@]}" --product passbridge
    swift build "${static[@]}" --product passbridge-relay
fi
bin=$(swift build -c release --show-bin-path)
if readelf -d "$bin/passbridge" "$bin/passbridge-relay" | grep -Eq '\((RUNPATH|RPATH)\)'; then
    echo "build-deb.sh: $bin/passbridge or passbridge-relay has a RUNPATH (build with --disable-local-rpath)" >&2
    exit 1
fi
version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["info"]["version"])' Protocol/openrpc.json)
[ "$("$bin/passbridge" --version)" = "passbridge $version" ] ||
    { echo "build-deb.sh: $bin/passbridge --version is not passbridge $version (build again)" >&2; exit 1; }
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
install -D -m 0755 "$bin/passbridge" "$root/usr/bin/passbridge"
install -D -m 0755 "$bin/passbridge-relay" "$root/usr/bin/passbridge-relay"
install -D -m 0755 Clients/shell/passbridge-call "$root/usr/bin/passbridge-call"
units="$root/usr/lib/systemd/system"
install -d "$units"
for unit in passbridge.socket passbridge.service; do
    sed 's#/usr/local/bin/#/usr/bin/#g' "Clients/systemd/$unit" >"$units/$unit"
    chmod 0644 "$units/$unit"
done
grep -q '^ExecStart=/usr/bin/passbridge ' "$units/passbridge.service" ||
    { echo "build-deb.sh: passbridge.service's ExecStart= does not start /usr/bin/passbridge" >&2; exit 1; }
install -D -m 0644 Clients/systemd/passbridge.sysusers.conf "$root/usr/lib/sysusers.d/passbridge.conf"

doc="$root/usr/share/doc/passbridge"
install -D -m 0644 Clients/systemd/README.md "$doc/README.md"
install -m 0644 README.md "$doc/README.PassBridge.md"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Reproducible: every file dated from the commit (SOURCE_DATE_EPOCH wins when set).
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
# Machine-readable (Debian's "Machine-readable debian/copyright file", format 1.0): LICENSE's licence, and the
# years from the first commit to the one built.
last_year=$(date -u -d "@$epoch" +%Y)
first_year=$(git log --max-parents=0 --format=%cd --date=format-local:%Y 2>/dev/null | sort | sed -n 1p || true)
years=${first_year:-$last_year}
[ "$years" = "$last_year" ] || years="$years-$last_year"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: PassBridge
Source: the PassBridge repository (LICENSE)

Files: *
Copyright: $years PassBridge developers
License: Apache-2.0

License: Apache-2.0
 On Debian systems the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF
{
    echo "passbridge ($version) unstable; urgency=medium"
    echo
    echo "  * Built from the PassBridge repository at commit $commit."
    echo
    echo " -- PassBridge developers <passbridge@packages.invalid>  $(date -u -R -d "@$epoch")"
} | gzip -9n >"$doc/changelog.gz"  # a native package's changelog (Debian Policy 12.7)

# The man pages, from each command's own --help (DaemonOptions.table declares each flag of the daemon once).
install -d "$root/usr/share/man/man1"
for command in passbridge passbridge-relay passbridge-call; do
    "$root/usr/bin/$command" --help | python3 "$here/help2roff.py" "$command" "$version" "$epoch" |
        gzip -9n >"$root/usr/share/man/man1/$command.1.gz"
done

# Depends: the package of each shared object the binaries need, by soname (Debian 12 names).
declare -A package_of=(
    [libc.so.6]=libc6 [libm.so.6]=libc6 [ld-linux-x86-64.so.2]=libc6 [libgcc_s.so.1]=libgcc-s1
    [libstdc++.so.6]=libstdc++6 [libjansson.so.4]=libjansson4
    # Opened with dlopen (Sources/CCurl, Sources/CDigest, Sources/CSQLite): by the first setRequestor, not at start-up.
    [libcurl.so.4]="libcurl4 (>= 7.68)" [libcrypto.so.3]=libssl3 [libsqlite3.so.0]=libsqlite3-0
)
needed=$(readelf -d "$bin/passbridge" "$bin/passbridge-relay" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u)
declare -A depends=()
for soname in $needed libcurl.so.4 libcrypto.so.3 libsqlite3.so.0; do
    [ -n "${package_of[$soname]:-}" ] ||
        { echo "build-deb.sh: no Debian package known for $soname (add it to package_of)" >&2; exit 1; }
    depends[${package_of[$soname]}]=1
done
# The newest glibc symbol version the binaries use.
glibc=$(objdump -T "$bin/passbridge" "$bin/passbridge-relay" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
unset 'depends[libc6]'
others=$(printf '%s\n' "${!depends[@]}" | sort | paste -sd, | sed 's/,/, /g')
depends_line="libc6 (>= $glibc)${others:+, $others}"

install -d "$stage/root/DEBIAN"
for script in postinst prerm postrm; do
    install -m 0755 "$here/maintainer-scripts/$script" "$root/DEBIAN/$script"
done
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: passbridge
Version: $version
Architecture: $arch
Maintainer: PassBridge developers <passbridge@packages.invalid>
Installed-Size: $installed_size
Depends: $depends_line
Recommends: systemd
Suggests: libpq5, qrencode
Section: net
Priority: optional
Description: Adobe Pass AccessEnabler over JSON-RPC 2.0 (daemon, socket-activated)
 PassBridge hosts Adobe Pass Authentication's AccessEnabler entitlement engine,
 re-built on REST API V2 and Dynamic Client Registration, behind JSON-RPC 2.0
 over stdio or a Unix socket. This package installs the static daemon, its
 relay and the passbridge-call shell client, and runs one daemon for the box
 through systemd socket activation on /run/passbridge/passbridge.sock.
 .
 The software statement Adobe issued goes in /etc/passbridge/software-statement
 (root only, 0600). libpq5 is needed only for a PostgreSQL store (--store).
EOF
find "$root" -exec touch -h -d "@$epoch" {} +
deb="$out/passbridge_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
