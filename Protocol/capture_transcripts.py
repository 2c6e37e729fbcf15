#!/usr/bin/env python3
"""Runs each flow of Protocol/README.md through the real passbridge against a real pass-emulator and prints
the message transcripts (markdown) that the README shows. Usage: Protocol/capture_transcripts.py [BIN_DIR]
(default: `swift build --show-bin-path`). Long tokens are shortened with "…"; nothing else is edited."""
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "python"))
from rpc_helper import Emulator, StdioDaemon, daemon_args, follow_to_redirect_url  # noqa: E402


def shorten(value):
    """Media tokens cut to 32 characters + "…"."""
    if isinstance(value, dict):
        return {k: (v[:32] + "…" if k == "token" and isinstance(v, str) else shorten(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v) for v in value]
    return value


def show(title, daemon, since):
    print(f"#### {title}\n\n```")
    for arrow, message in daemon.transcript[since:]:
        print(arrow, json.dumps(shorten(message), ensure_ascii=False, separators=(",", ":")))
    print("```\n")
    return len(daemon.transcript)


def login(daemon, mvpd="MockMVPD"):
    start = daemon.mark()
    get_id = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    notes, _ = daemon.exchange("setSelectedProvider", {"mvpdId": mvpd})
    redirect = follow_to_redirect_url(notes[-1]["params"]["url"])
    daemon.call("handleExternalURL", {"url": redirect})
    daemon.response(get_id, start)


def main():
    bin_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(
        subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip())
    emulator = Emulator(bin_dir)
    state = tempfile.mkdtemp()
    try:
        daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
        mark = 0
        daemon.call("init", {})
        daemon.call("setRequestor", {"requestorID": "REF"})
        daemon.call("checkAuthentication")
        mark = show("Start-up: init, setRequestor, checkAuthentication (cold start)", daemon, mark)
        start = daemon.mark()
        get_id = daemon.send("getAuthentication")
        daemon.notification("displayProviderDialog", start)
        daemon.call("setSelectedProvider", {"mvpdId": None})
        daemon.response(get_id, start)
        mark = show("Cancel at the picker", daemon, mark)
        login(daemon)
        mark = show("Login (the host walks navigateToUrl's page to the redirect URL, then calls handleExternalURL)", daemon, mark)
        daemon.call("checkAuthorization", {"resource": "ch1"})
        mark = show("Authorization", daemon, mark)
        daemon.call("checkAuthorization", {"resource": "ch2"})
        mark = show("Denial", daemon, mark)
        daemon.call("getMetadata", {"opCode": "METADATA_USER_META", "userMetaKey": "zip"})
        daemon.call("getSelectedProvider")
        mark = show("Metadata and the selected provider", daemon, mark)
        start = daemon.mark()
        logout_id = daemon.send("logout")
        _, navigate = daemon.notification("navigateToUrl", start)
        daemon.call("handleExternalURL", {"url": follow_to_redirect_url(navigate["params"]["url"])})
        daemon.response(logout_id, start)
        mark = show("Logout", daemon, mark)
        start = daemon.mark()
        get_id = daemon.send("getAuthentication")
        daemon.notification("displayProviderDialog", start)
        daemon.call("setSelectedProvider", {"mvpdId": "TempPass"})
        daemon.response(get_id, start)
        daemon.call("checkAuthorization", {"resource": "ch2"})
        mark = show("TempPass (no login page)", daemon, mark)
        daemon.stop()

        errors = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
        errors.exchange("checkAuthentication")
        errors.exchange("setRequestor", {"requestorID": 42})
        errors.exchange("setRequestor", ["REF"])
        errors.exchange("getToken")
        errors.call("setRequestor", {"requestorID": "REF"})
        errors.exchange("handleExternalURL", {"url": "https://example.com/done"})
        errors.exchange("getMetadata", {"opCode": "METADATA_AUTHORIZATION"})
        start = errors.mark()
        errors.send_raw('{"jsonrpc":"2.0","id":9,"method":"checkAuthentication"')
        errors.wait_for(lambda m: "error" in m and m.get("id") is None, start)
        errors.transcript.insert(len(errors.transcript) - 1, ("-->", {"(raw text)": '{"jsonrpc":"2.0","id":9,"method":"checkAuthentication"'}))
        show("Errors", errors, 0)
        errors.stop()

        screen = StdioDaemon(bin_dir, *daemon_args(emulator.base, tempfile.mkdtemp(), "--activation-url", emulator.base + "/activate"))
        screen.call("init", {"webView": False})
        screen.call("setRequestor", {"requestorID": "REF"})
        start = screen.mark()
        get_id = screen.send("getAuthentication")
        screen.notification("displayProviderDialog", start)
        notes, _ = screen.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
        regcode = next(n["params"] for n in notes if n["method"] == "status")
        follow_to_redirect_url(regcode["url"], extra_fields={"code": regcode["code"]}, stop_at_page_without_form=True)
        screen.response(get_id, start)
        show("Second screen (init webView false; the code is entered on the activation page by another device)", screen, 0)
        screen.stop()
    finally:
        emulator.stop()


if __name__ == "__main__":
    main()
