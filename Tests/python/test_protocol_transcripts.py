"""The message transcripts of Protocol/README.md say what the daemon sends: every notification and every result in
them validates against Protocol/openrpc.json (an MVPD object without `requiresSVC`, a status without `errorId`,
fails), so the captured flows cannot drift from the contract."""
import json
import pathlib

from rpc_helper import check_against_openrpc

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT / "Protocol" / "openrpc.json").read_text())


def transcripts() -> list[list[tuple[str, dict]]]:
    """Each fenced block of Protocol/README.md that holds `-->` / `<--` lines, as (arrow, message) pairs."""
    blocks, current, fenced = [], [], False
    for line in (ROOT / "Protocol" / "README.md").read_text().splitlines():
        text = line.strip()
        if text.startswith("```"):
            if fenced and current:
                blocks.append(current)
            current, fenced = [], not fenced
            continue
        if fenced and text[:4] in ("--> ", "<-- "):
            current.append((text[:3], json.loads(text[4:])))
    return blocks


def test_every_captured_message_agrees_with_openrpc():
    blocks = transcripts()
    assert len(blocks) >= 10
    checked = sum(check_against_openrpc(block, DOCUMENT) for block in blocks)
    assert checked >= 50


def test_a_transcript_with_an_mvpd_lacking_requires_svc_fails():
    mvpd = {"ID": "M", "displayName": "M", "logoURL": None, "enablePlatformServices": False, "boardingStatus": None,
            "displayInPlatformPicker": False, "platformMappingId": None, "isTempPass": False}
    block = [("<--", {"jsonrpc": "2.0", "method": "displayProviderDialog", "params": {"mvpds": [mvpd]}})]
    try:
        check_against_openrpc(block, DOCUMENT)
    except Exception as error:  # jsonschema's ValidationError
        assert "requiresSVC" in str(error)
    else:
        raise AssertionError("an MVPD without requiresSVC validated")
