#!/usr/bin/env bash
# Log in a set-top box with a second screen: init {webView: false}, getAuthentication, pick MVPD (default
# MockMVPD), print the registration code and the activation page from the REGCODE status, then wait (up to
# 30 min, the code's lifetime) while the daemon polls until the user has finished on a phone or computer.
#   REQUESTOR=REF [DEVICE=ID] second-screen.sh [MVPD] [passbridge-call options]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/session.sh"
mvpd=MockMVPD
[[ $# -gt 0 && $1 != -* ]] && { mvpd=$1; shift; }

SESSION_TIMEOUT=1800 session_open "$@"
session_start_login '{"webView":false}' "$mvpd"
status=$(session_note status '"id":"REGCODE"') || exit 1
code=$(json_str "$status" code) && url=$(json_str "$status" url) || { echo "no registration code: $status" >&2; exit 1; }
echo "REGCODE $code"
# The activation page asks for the code; without one (the daemon has no --activation-url) the URL is the
# authenticate page, which carries the code itself.
if json_str "$status" activationUrl >/dev/null; then
    echo "On your phone or computer, open $url and enter the code $code"
else
    echo "On your phone or computer, open $url (it carries the code $code)"
fi
SESSION_TIMEOUT=1800 session_close   # waits for getAuthentication's answer: when the login ends
if [[ ${SESSION_REST[0]:-} == *'"status":1'* ]]; then
    echo "logged in at $mvpd"
    exit 0
fi
echo "login failed: $(failure "${SESSION_REST[0]:-}")"
exit 1
