"""Failures say why, end to end (Protocol/README.md "Failure reasons"): the real daemon against the emulator, seen
through the Python client, with the daemon's log at its default level.

No software statement, an unknown requestor, an unreachable backend, an MVPD id the dialog did not offer, and a
misspelled param each end with their reason in the result (or a -32602 naming the closest name), never a bare
`{"status": 0}`.
"""
import asyncio
import pathlib
import subprocess
from typing import Any, List

import pytest

from clients_support import emulator_url, statement  # noqa: F401  (fixture)

import passbridge  # noqa: E402


def spawn(bin_dir: pathlib.Path, tmp_path: pathlib.Path, *args: str, log: Any = subprocess.DEVNULL) -> passbridge.AccessEnabler:
    return passbridge.AccessEnabler.spawn("--state-dir", str(tmp_path / "state"), *args,
                                          executable=str(bin_dir / "passbridge"), stderr=log, timeout=30)


def reasons(result: Any) -> List[str]:
    return [f"{s['id']} {s.get('message', '')}" for s in result.get("statuses", [])]


# Where the statement goes, in R400's details when the daemon was started without one (Protocol/README.md, "Reasons").
NO_STATEMENT = ("passbridge was started without --software-statement: pass --software-statement JWT|@FILE (the statement "
                "Adobe issued for the application), or softwareStatement in init")


def test_no_software_statement_says_r400_and_later_calls_repeat_it(bin_dir, emulator_url, tmp_path):
    log = tmp_path / "daemon.log"
    with log.open("w") as sink, spawn(bin_dir, tmp_path, "--backend", emulator_url, log=sink) as ae:
        result = ae.setRequestor("REF")
        assert result == {"status": 0, "statuses": [{"id": "R400", "errorId": "R400", "level": "error", "message": "No software statement",
                                                     "details": NO_STATEMENT}]}
        later = ae.checkAuthentication()
        assert later["errorCode"] == passbridge.GENERIC_AUTHENTICATION_ERROR
        assert reasons(later) == ["R400 No software statement"]
        denied = ae.getAuthorization("ch1")
        assert denied["errorCode"] == "Generic Authorization Error" and reasons(denied) == ["R400 No software statement"]
    # A warning: the operator's to fix (a fleet operator's pass: `journalctl -p warning` showed nothing, at info).
    assert "warning bridge: setRequestor REF failed: R400 No software statement" in log.read_text()


def test_unknown_requestor_says_cfg400(bin_dir, emulator_url, tmp_path):
    log = tmp_path / "daemon.log"
    with log.open("w") as sink, spawn(bin_dir, tmp_path, "--backend", emulator_url, "--software-statement", statement(),
                                      log=sink) as ae:
        result = ae.setRequestor("NOPE")
        assert result["status"] == 0
        assert [s["id"] for s in result["statuses"]] == ["CFG400"]
        # Named as a requestor the backend does not know, with the backend's own words beside.
        assert result["statuses"][0]["message"] == "The backend does not know the requestor id 'NOPE' (ids are case-sensitive)"
        # The emulator lists the requestors it knows (Sources/PassEmulator/README.md); the status carries the list.
        assert result["statuses"][0]["details"] == ("The service provider parameter value is missing or invalid. "
                                                    "Known service providers: REF, REF2")
    assert "setRequestor NOPE failed: CFG400" in log.read_text()


def test_a_requestor_id_of_100_kb_is_logged_as_an_excerpt(bin_dir, emulator_url, tmp_path):
    """From a breaking pass: the failed setRequestor's log line held the whole id the host sent."""
    log = tmp_path / "daemon.log"
    with log.open("w") as sink, spawn(bin_dir, tmp_path, "--backend", emulator_url, "--software-statement", statement(),
                                      log=sink) as ae:
        assert ae.setRequestor("X" * 100_000)["status"] == 0
    line = next(line for line in log.read_text().splitlines() if " failed: CFG400" in line)
    assert f"setRequestor {'X' * 64}… failed: CFG400" in line and len(line) < 2_000, len(line)


def test_unreachable_backend_says_cfg404(bin_dir, tmp_path):
    with spawn(bin_dir, tmp_path, "--backend", "http://127.0.0.1:9", "--software-statement", statement()) as ae:
        result = ae.setRequestor("REF")
    assert result == {"status": 0, "statuses": [{"id": "CFG404", "errorId": "CFG404", "level": "error", "message": "Backend not reachable",
                                                 "details": "http://127.0.0.1:9 could not be reached"}]}


def test_mvpd_id_the_dialog_did_not_offer_says_pb404_with_the_closest(bin_dir, emulator_url, tmp_path):
    async def main() -> Any:
        ae = await passbridge.AsyncAccessEnabler.spawn(
            "--state-dir", str(tmp_path / "state"), "--backend", emulator_url, "--software-statement", statement(),
            executable=str(bin_dir / "passbridge"), stderr=subprocess.DEVNULL)
        async with ae:
            await ae.setRequestor("REF")
            events = ae.events("displayProviderDialog", "status")
            login = asyncio.ensure_future(ae.getAuthentication())
            await events.next("displayProviderDialog", timeout=10)
            selection = await ae.setSelectedProvider("MockMvpd")
            note = await events.next("status", timeout=10)
            return selection, note.params, await asyncio.wait_for(login, 10)

    selection, note, login = asyncio.run(main())
    assert selection["errorCode"] == passbridge.PROVIDER_NOT_SELECTED_ERROR
    assert note["id"] == "PB404" and note["message"] == "No MVPD 'MockMvpd' in the provider dialog; did you mean 'MockMVPD'?"
    assert selection["statuses"] == [note]
    assert login["errorCode"] == passbridge.PROVIDER_NOT_SELECTED_ERROR
    assert login["statuses"] == [note]


def test_cancel_and_not_logged_in_carry_no_statuses(bin_dir, emulator_url, tmp_path):
    with spawn(bin_dir, tmp_path, "--backend", emulator_url, "--software-statement", statement()) as ae:
        assert ae.setRequestor("REF") == {"status": 1}
        assert ae.checkAuthentication() == {"status": 0, "errorCode": passbridge.USER_NOT_AUTHENTICATED_ERROR}


def test_misspelled_param_is_refused_naming_the_closest(bin_dir, emulator_url, tmp_path):
    with spawn(bin_dir, tmp_path, "--backend", emulator_url, "--software-statement", statement()) as ae:
        with pytest.raises(passbridge.RPCError) as refused:
            ae.call("init", {"webview": False})
        assert refused.value.code == -32602
        assert refused.value.message == "Invalid params: 'webview' is not a param of init; did you mean 'webView'?"
        assert refused.value.data["closest"] == "webView"
        with pytest.raises(passbridge.RPCError) as misspelled:  # setOptions is refused the same way
            ae.setOptions(handleSvc=True)
        assert misspelled.value.code == -32602 and misspelled.value.data["closest"] == "handleSVC"
