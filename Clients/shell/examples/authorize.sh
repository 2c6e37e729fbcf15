#!/usr/bin/env bash
# May the logged-in user watch RESOURCE? One checkAuthorization call (it never starts a login): prints the
# short media token (exit 0) or the denial (exit 1).
#   REQUESTOR=REF [DEVICE=ID] authorize.sh RESOURCE [passbridge-call options]
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: authorize.sh RESOURCE [passbridge-call options]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
resource=$1
shift
# passbridge-call exits 1 with a result for a denial, 1 without one (or 2) when the call itself failed.
result=$("${PASSBRIDGE_CALL:-$here/../passbridge-call}" "$@" --requestor "${REQUESTOR:-REF}" ${DEVICE:+--device "$DEVICE"} \
    checkAuthorization "{\"resource\":\"$resource\"}")
[ $? -le 1 ] && [ -n "$result" ] || exit 2
if [[ $result =~ \"token\":\"([^\"]*)\" ]]; then
    echo "permitted: $resource"
    echo "media token: ${BASH_REMATCH[1]}"
    exit 0
fi
[[ $result =~ \"errorCode\":\"([^\"]*)\" ]] && code=${BASH_REMATCH[1]}
[[ $result =~ \"errorDescription\":\"(([^\"\\]|\\.)*)\" ]] && why=${BASH_REMATCH[1]//\\\"/\"}
echo "denied: $resource: ${code:-?}${why:+: $why}"
exit 1
