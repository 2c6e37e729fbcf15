#!/usr/bin/env python3
"""A whole TV app: log in with a code entered on a second screen, play what the MVPD permits, log out.

Runs against the Adobe Pass emulator that ``passbridge --backend emulator`` starts (its default configuration:
requestor REF, MVPD MockMVPD with user demo/demo, ch1 permitted, ch2 denied). On the phone, open the page the
app prints and enter the code. Extra arguments go to the daemon (e.g. ``--state-dir DIR``); the daemon is
``$PASSBRIDGE`` or the one ``passbridge.find_daemon`` finds.
Usage: tv_app.py [DAEMON FLAGS…]
"""
import asyncio
import sys

import passbridge


def show(code: passbridge.RegistrationCode) -> None:
    if not code.update:
        print(f"On your phone, open {code.url} and enter {code.code}", flush=True)
    print(f"  (code valid for {code.seconds_left} s more)", flush=True)


async def main() -> int:
    async with await passbridge.AsyncAccessEnabler.spawn("--backend", "emulator", *sys.argv[1:]) as tv:
        await tv.init(webView=False)  # a set-top box: no web view, the login happens on another device
        await tv.set_requestor("REF")
        if not (await tv.check_authentication()).authenticated:
            try:
                await tv.login_second_screen(show, mvpd="MockMVPD", timeout=15 * 60)
            except passbridge.NotAuthenticated as failed:
                print(f"Not logged in: {failed.error_code} {failed.reasons}")
                return 1
        for channel in ("ch1", "ch2"):
            try:
                token = await tv.authorize(channel)
                print(f"{channel}: playing (media token {token[:12]}…)")
            except passbridge.NotAuthorized as denied:
                print(f"{channel}: not in your package: {denied.mvpd_message}")
        await tv.log_out()
        print("Logged out")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
