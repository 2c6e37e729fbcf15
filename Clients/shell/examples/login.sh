#!/usr/bin/env bash
# Log in with a web view: getAuthentication, pick MVPD (default MockMVPD) in displayProviderDialog, open the
# navigateToUrl page, hand the redirect URL it ends at to handleExternalURL. $WEB_VIEW is the command that
# opens a URL and prints the redirect URL it reached (default: ask you to open it in a browser and paste
# the address the browser could not open).
#   REQUESTOR=REF [DEVICE=ID] WEB_VIEW="…" login.sh [MVPD] [passbridge-call options]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/session.sh"
mvpd=MockMVPD
[[ $# -gt 0 && $1 != -* ]] && { mvpd=$1; shift; }

ask_user() {
    local reached=""
    if ! { : </dev/tty; } 2>/dev/null; then
        echo "no terminal to paste the address into: set WEB_VIEW to a command that opens the page and prints the" \
            "redirect URL it reached" >&2
        return 1
    fi
    echo "Open this page in a browser and log in: $1" >&2
    read -r -p "Then paste the address it ends at (adobepass://…): " reached </dev/tty || return 1
    printf '%s\n' "$reached"
}

session_open "$@"
session_start_login "" "$mvpd"
url=$(json_str "$(session_note navigateToUrl)" url) || { echo "no login page" >&2; exit 1; }
echo "login page: ${url%%\?*}"
if reached=$(${WEB_VIEW:-ask_user} "$url"); then
    session_send "handleExternalURL {\"url\":\"$reached\"}"
else
    echo "the login page did not reach the redirect URL: cancelling" >&2
    session_send "setSelectedProvider {\"mvpdId\":null}"   # ends the flow: "Provider not Selected Error"
fi
session_close   # the answers of handleExternalURL and of getAuthentication, in either order
if [[ ${#SESSION_REST[@]} == 2 && ${SESSION_REST[0]} == *'"status":1'* && ${SESSION_REST[1]} == *'"status":1'* ]]; then
    echo "logged in at $mvpd"
    exit 0
fi
for line in "${SESSION_REST[@]}"; do
    [[ $line == *'"status":1'* ]] || { echo "login failed: $(failure "$line")"; exit 1; }
done
echo "login failed: ${SESSION_REST[*]}"
exit 1
