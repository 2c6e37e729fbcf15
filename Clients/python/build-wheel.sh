#!/usr/bin/env bash
# Builds PassBridge's Python platform wheels from this repository, offline:
#
#   Clients/python/build-wheel.sh [--out DIR] [--no-emulator] [--no-build]
#
# * passbridge-VERSION-py3-none-linux_ARCH.whl: the client package of Clients/python with the static, stripped
#   daemon (`swift build -c release --static-swift-stdlib -Xlinker --strip-all --disable-local-rpath --product
#   passbridge`: no RUNPATH) as
#   passbridge/_bin/passbridge, which AccessEnabler.spawn() uses when no executable is given, and the relay beside
#   it; the commands passbridge (passbridge state list), passbridge-relay and passbridge-call (Clients/shell) on
#   the environment's PATH, and the examples' scripted browser as passbridge.browser (make_wheel.py).
# * passbridge_emulator-VERSION-py3-none-linux_ARCH.whl (unless --no-emulator): the static pass-emulator, installed
#   beside that daemon so `spawn("--backend", "emulator")` works offline; `pip install 'passbridge[emulator]'`
#   pulls it in. A wheel of its own because it is four times the daemon's size (it links Foundation and ICU)
#   and an application in production never runs it.
#
# VERSION is info.version of Protocol/openrpc.json; passbridge.__version__ must say the same. The tag is
# linux_ARCH, not manylinux: the binaries use the system's libjansson (and open libsqlite3, libcurl and
# libcrypto), which manylinux does not allow, so the wheels are for Debian 12 or newer with those packages
# (apt install libjansson4 libsqlite3-0 libcurl4 libssl3). The wheels are written with the standard library
# (make_wheel.py): no setuptools `wheel` package, nothing from PyPI. --out DIR: where they go (default
# .build/packages). --no-build: use the release binaries already built (they must be the static build). Prints
# each wheel's path.
set -euo pipefail

usage_error() {
    echo "build-wheel.sh: $1 (see the comment at the top of Clients/python/build-wheel.sh)" >&2
    exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="$repo/.build/packages"
build=1
emulator=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || usage_error "--out needs a directory"; out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --no-emulator) emulator=0; shift ;;
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
    [ "$emulator" = 0 ] || swift build "${static[@]}" --product pass-emulator
fi
bin=$(swift build -c release --show-bin-path)
version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["info"]["version"])' Protocol/openrpc.json)
client_version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' Clients/python/passbridge/__init__.py)
[ "$client_version" = "$version" ] ||
    { echo "build-wheel.sh: passbridge.__version__ is '$client_version', Protocol/openrpc.json says $version" >&2; exit 1; }
for binary in passbridge passbridge-relay $([ "$emulator" = 0 ] || echo pass-emulator); do
    [ "$("$bin/$binary" --version)" = "$binary $version" ] ||
        { echo "build-wheel.sh: $bin/$binary --version is not $binary $version (build again)" >&2; exit 1; }
done

tag="py3-none-linux_$(uname -m)"
emulator_args=()
[ "$emulator" = 0 ] || emulator_args=(--emulator "$bin/pass-emulator")
python3 "$here/make_wheel.py" --version "$version" --tag "$tag" --out "$out" --daemon "$bin/passbridge" --relay "$bin/passbridge-relay" "${emulator_args[@]}"
