#!/usr/bin/env bash
# Is this device logged in for the requestor? One call; prints the answer, exit 0 if authenticated, else 1.
#   REQUESTOR=REF [DEVICE=ID] check-auth.sh [passbridge-call options, e.g. --socket /run/passbridge/passbridge.sock]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# passbridge-call exits 1 with a result when the answer is "no", 1 without one (or 2) when the call itself failed.
result=$("${PASSBRIDGE_CALL:-$here/../passbridge-call}" "$@" --requestor "${REQUESTOR:-REF}" ${DEVICE:+--device "$DEVICE"} checkAuthentication)
[ $? -le 1 ] && [ -n "$result" ] || exit 2
if [[ $result == *'"status":1'* ]]; then
    echo "authenticated"
    exit 0
fi
[[ $result =~ \"errorCode\":\"([^\"]*)\" ]]
echo "not authenticated: ${BASH_REMATCH[1]:-$result}"
exit 1
