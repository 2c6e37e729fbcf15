#!/usr/bin/env bash
# Log out: logout, open the MVPD's logout page (navigateToUrl) with $WEB_VIEW up to the redirect URL, hand
# it to handleExternalURL. Without $WEB_VIEW (a set-top box) the instance is a host without a web view
# (init {"webView": false}): no page to open, and the logout is answered at once. Exit 0 when logged out.
#   REQUESTOR=REF [DEVICE=ID] WEB_VIEW="…" logout.sh [passbridge-call options]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/session.sh"

session_open "$@"
if [ -n "${WEB_VIEW:-}" ]; then session_init; else session_init '{"webView":false}'; fi
session_send "setRequestor {\"requestorID\":\"${REQUESTOR:-REF}\"}"
session_send "checkAuthentication"
session_response && session_response || exit 2
if [[ $REPLY_LINE != *'"status":1'* || -z ${WEB_VIEW:-} ]]; then
    session_send "logout"        # nothing to open: answered at once
else
    session_mark
    session_send "& logout"
    session_send "wait navigateToUrl"
    url=$(json_str "$(session_note navigateToUrl)" url) || exit 1
    echo "logout page: ${url%%\?*}"
    reached=$($WEB_VIEW "$url") || exit 1
    session_send "handleExternalURL {\"url\":\"$reached\"}"
fi
session_close   # every answer still to read: logout's (and handleExternalURL's)
[ ${#SESSION_REST[@]} -gt 0 ] || { echo "no answer to logout" >&2; exit 2; }
for line in "${SESSION_REST[@]}"; do
    [[ $line == *'"status":0'*'"User Not Authenticated Error"'* ]] || { echo "logout failed: $(failure "$line")"; exit 1; }
done
echo "logged out"
exit 0
