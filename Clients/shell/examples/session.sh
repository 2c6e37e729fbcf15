# shellcheck shell=bash
# session.sh — sourced by the examples: one `passbridge-call --session` connection in the background, so a
# script can send a line, read the answer, and look at the notifications that came meanwhile.
#   session_open [passbridge-call options…]  start it (notifications collect in $SESSION_NOTES)
#   session_send LINE                        send a session line: "METHOD [PARAMS]", "& METHOD …", "wait NAME"
#   session_response                         read the next response line into $REPLY_LINE (exit 1 on timeout)
#   session_mark                             remember where the notifications are now
#   session_note NAME [TEXT]                 print the first notification NAME (holding TEXT) since the mark
#   session_close                            end input: passbridge-call then waits for the answers to its
#                                            "&" requests; they (and any unread answer) land in ${SESSION_REST[@]};
#                                            returns passbridge-call's exit status
# passbridge-call prints the answers of "&" requests on stdout as they arrive, among the others; a script that
# does not read them one by one (session_response) collects them with session_close.
#   session_start_login INIT MVPD            init (params INIT, and deviceIdentifier $DEVICE when set: a
#                                            fleet's device), setRequestor $REQUESTOR (default REF), then
#                                            exit 0 if already logged in; else getAuthentication, pick MVPD at
#                                            the provider dialog (notifications after it marked), read its answer
#                                            (exit 0 when the pick logged in: TempPass; 1 when it ended the login)
#   session_init [INIT]                      init with params INIT, and deviceIdentifier $DEVICE when set, and
#                                            read its answer (exit 2 with the daemon's reason when it refused it)
#   json_str LINE KEY                        the string value of "KEY" in a JSON line (simple values only)
#   failure LINE                             "ERRORCODE: the first status's message" of a failed answer LINE
PB_CALL=${PASSBRIDGE_CALL:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/passbridge-call"}
SESSION_TIMEOUT=${SESSION_TIMEOUT:-60}

# passbridge-call runs in the background between two named pipes, not as a bash coprocess: bash closes a
# coprocess's pipes and unsets its variables as soon as it notices the process ended, which can be before its last
# answers were read (session_close then failed with "PB_SESSION[0]: unbound variable"). These pipes stay open until
# this script closes them.
session_open() {
    local arg
    for arg in "$@"; do
        # The script sends init itself: passbridge-call's --device would be a second init.
        [[ $arg != --device && $arg != --device=* ]] || { echo "these examples take the device as DEVICE=ID, not --device" >&2; exit 2; }
    done
    # A control character would end the init line, or make it JSON no longer: the init would fail, and the session
    # go on as the store's own device.
    [[ ! ${DEVICE:-} =~ [[:cntrl:]] ]] || { echo "DEVICE holds a control character" >&2; exit 2; }
    SESSION_DIR=$(mktemp -d)
    SESSION_NOTES=$SESSION_DIR/notes
    SESSION_MARK=0
    trap 'rm -rf "$SESSION_DIR"' EXIT
    mkfifo "$SESSION_DIR/in" "$SESSION_DIR/out"
    # Each side opens the pipes in the same order (in, then out), so neither open waits forever.
    "$PB_CALL" --timeout "$SESSION_TIMEOUT" "$@" --session <"$SESSION_DIR/in" >"$SESSION_DIR/out" 2>"$SESSION_NOTES" &
    SESSION_PID=$!
    exec {SESSION_IN}>"$SESSION_DIR/in" {SESSION_OUT}<"$SESSION_DIR/out"
}

session_send() {
    printf '%s\n' "$1" >&"$SESSION_IN"
}

session_response() {
    IFS= read -r -t "$SESSION_TIMEOUT" REPLY_LINE <&"$SESSION_OUT" || {
        echo "no answer from passbridge-call: $(tail -n 3 "$SESSION_NOTES")" >&2
        return 1
    }
}

session_mark() {
    SESSION_MARK=$(wc -l <"$SESSION_NOTES")
}

session_note() {
    local line deadline=$((SECONDS + SESSION_TIMEOUT))
    while [ "$SECONDS" -lt "$deadline" ]; do
        line=$(tail -n "+$((SESSION_MARK + 1))" "$SESSION_NOTES" | grep -F "\"method\":\"$1\"" | grep -m 1 -F -- "${2:-}") && {
            printf '%s\n' "$line"
            return 0
        }
        sleep 0.2
    done
    echo "no $1 notification within ${SESSION_TIMEOUT}s" >&2
    return 1
}

session_close() {
    local line
    SESSION_REST=()
    exec {SESSION_IN}>&-
    while IFS= read -r -t "$SESSION_TIMEOUT" line <&"$SESSION_OUT"; do SESSION_REST+=("$line"); done
    exec {SESSION_OUT}<&-
    wait "$SESSION_PID"
}

session_init() {
    local init=${1:-} device
    if [ -n "${DEVICE:-}" ]; then
        device=${DEVICE//\\/\\\\}
        device="\"deviceIdentifier\":\"${device//\"/\\\"}\""
        if [ -z "$init" ]; then init="{$device}"; else init="{$device,${init#\{}"; fi
    fi
    session_send "init $init"
    session_response || exit 2
    # A refused init (a DEVICE too long, or not UTF-8) would leave the session acting for the store's own device.
    if [[ $REPLY_LINE == *'"error"'* ]]; then
        echo "init failed: $REPLY_LINE" >&2
        session_close
        exit 2
    fi
}

session_start_login() {
    session_init "$1"
    session_send "setRequestor {\"requestorID\":\"${REQUESTOR:-REF}\"}"
    session_send "checkAuthentication"
    session_response && session_response || exit 2
    if [[ $REPLY_LINE == *'"status":1'* ]]; then
        echo "already logged in"
        session_close
        exit 0
    fi
    session_send "& getAuthentication"
    session_send "wait displayProviderDialog"
    session_mark
    session_send "setSelectedProvider {\"mvpdId\":\"$2\"}"
    session_response || exit 2
    # TempPass logs in at the pick itself: no page, no code.
    if [[ $REPLY_LINE == *'"status":1'* ]]; then
        echo "logged in at $2"
        session_close
        exit 0
    fi
    # An MVPD the dialog did not offer ends the login at once (PB404 names the offered ones).
    if [[ $REPLY_LINE == *'"status":0'* ]]; then
        echo "login failed: $(failure "$REPLY_LINE")" >&2
        session_close
        exit 1
    fi
}

json_str() {
    [[ $1 =~ \"$2\":\"([^\"]*)\" ]] && printf '%s\n' "${BASH_REMATCH[1]}"
}

failure() {
    local code message
    code=$(json_str "$1" errorCode) || code="failed"
    message=$(json_str "$1" message) && code="$code: $message"
    printf '%s\n' "$code"
}
