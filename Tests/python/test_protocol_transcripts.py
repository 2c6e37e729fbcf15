"""The message transcripts of Protocol/README.md say what the daemon sends: every notification and every result in
them validates against Protocol/openrpc.json (an MVPD object without `requiresSVC`, a status without `errorId`,
fails), so the captured flows cannot drift from the contract."""
import json
import pathlib
import subprocess
import sys

from rpc_helper import check_against_openrpc

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT / "Protocol" / "openrpc.json").read_text())


def titled_blocks(text: str) -> list[tuple[str | None, list[tuple[str, dict]]]]:
    """Each fenced block of `text` that holds `-->` / `<--` lines, as (arrow, message) pairs, with the `#### ` title
    last seen above it."""
    blocks, current, title = [], None, None
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith("#### "):
            title = line[5:].strip()
        elif stripped.startswith("```"):
            if current:
                blocks.append((title, current))
            current = [] if current is None else None
        elif current is not None and stripped[:4] in ("--> ", "<-- "):
            current.append((stripped[:3], json.loads(stripped[4:])))
    return blocks


def transcripts() -> list[list[tuple[str, dict]]]:
    """Each transcript block of Protocol/README.md."""
    return [block for _, block in titled_blocks((ROOT / "Protocol" / "README.md").read_text())]


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


def flows(text: str) -> dict[str, list[tuple[str, dict]]]:
    """The first transcript block under each `#### ` title of `text`, by title."""
    found: dict[str, list[tuple[str, dict]]] = {}
    for title, block in titled_blocks(text):
        if title and title not in found:
            found[title] = block
    return found


def shapes(messages: list[tuple[str, dict]]) -> list:
    """What a flow is made of: each request, notification (a status by its id) and response (an error by its code),
    with the names of its params or result. Responses sent one after another are sorted: two responses that one
    callback ends come in either order (Protocol/README.md, Ordering rules)."""
    shaped, responses = [], []
    for arrow, message in messages:
        if "method" in message:
            shaped.extend(sorted(responses)); responses = []
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            status = params.get("id") if message["method"] == "status" else None
            shaped.append((arrow, message["method"], str(message.get("id")), str(status), sorted(params)))
        elif "error" in message:
            responses.append((arrow, "error", str(message.get("id")), str(message["error"]["code"]), []))
        elif "result" in message:
            result = message["result"] if isinstance(message["result"], dict) else {}
            responses.append((arrow, "result", str(message.get("id")), "", sorted(result)))
        else:
            shaped.extend(sorted(responses)); responses = []
            shaped.append((arrow, "raw text", "", "", []))
    return shaped + sorted(responses)


def test_the_captured_flows_are_what_the_daemon_sends_today(bin_dir):
    """Protocol/capture_transcripts.py, run now against the emulator, sends and receives in each flow the messages
    Protocol/README.md shows, in that order. The TempPass flow had drifted unseen: a checkAuthorization's Z011 status,
    and the `statuses` of its result, were missing."""
    captured = subprocess.run([sys.executable, str(ROOT / "Protocol" / "capture_transcripts.py"), str(bin_dir)],
                              capture_output=True, text=True, timeout=300)
    assert captured.returncode == 0, captured.stderr
    now, shown = flows(captured.stdout), flows((ROOT / "Protocol" / "README.md").read_text())
    assert len(now) >= 10 and set(now) <= set(shown), sorted(set(now) - set(shown))
    for title, messages in now.items():
        assert shapes(shown[title]) == shapes(messages), title


def test_a_flow_missing_a_status_differs_in_shape():
    status = ("<--", {"jsonrpc": "2.0", "method": "status", "params": {"id": "Z011", "level": "info"}})
    result = ("<--", {"jsonrpc": "2.0", "id": 17, "result": {"resource": "ch2"}})
    assert shapes([status, result]) != shapes([result])
    other = ("<--", {"jsonrpc": "2.0", "id": 16, "result": {"status": 1}})
    assert shapes([result, other]) == shapes([other, result])
