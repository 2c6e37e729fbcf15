"""getMetadata {opCode: METADATA_USER_META} without userMetaKey over the real daemon and emulator: the whole user
metadata object in the SDK's shape, `{updated, encrypted, data}` (Protocol/README.md, Values); with userMetaKey,
one attribute as before."""
import json
import pathlib

from rpc_helper import REDIRECT_URL, check_against_openrpc, web_login

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "openrpc.json").read_text())
PROFILE_TTL_MS = 86_400_000  # the emulator's default profileTTLSeconds


def login(client):
    web_login(client)


def test_user_metadata_without_a_key_is_the_whole_object(daemon):
    client = daemon.client()
    assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    whole = {"opCode": "METADATA_USER_META"}
    assert client.call("getMetadata", whole) == {"metadata": None, "encrypted": False, "key": 3, "arguments": whole}
    login(client)
    notAfter = client.call("getMetadata", {"opCode": 0})["expires"]
    zip_code = client.call("getMetadata", {"opCode": 3, "userMetaKey": "zip"})
    assert zip_code["encrypted"] is True and isinstance(zip_code["metadata"], str)

    notes, response = client.exchange("getMetadata", whole)
    expected = {"updated": (notAfter - PROFILE_TTL_MS) // 1000, "encrypted": ["zip"],
                "data": {"userID": "demo-user-0001", "householdID": "demo-household-0001", "zip": zip_code["metadata"]}}
    assert response["result"] == {"metadata": expected, "encrypted": False, "key": 3, "arguments": whole}
    assert [n["method"] for n in notes] == ["setMetadataStatus"] and notes[0]["params"] == response["result"]
    # By number too; a key still names one attribute.
    assert client.call("getMetadata", {"opCode": 3})["metadata"] == expected
    assert client.call("getMetadata", {"opCode": 3, "userMetaKey": "householdID"})["metadata"] == "demo-household-0001"
    client.close()
    assert check_against_openrpc(client.transcript, DOCUMENT) > 0


def test_an_op_code_not_known_says_which_are(daemon):
    """An unknown opCode name gets a -32602 that lists the op codes, or names the one meant when only the SDK's
    METADATA_ prefix is missing; the connection keeps working. It named the value alone before, unlike every other
    -32602 (a set-top team's first try was "AUTHENTICATION")."""
    client = daemon.client()
    assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    for sent, reason in [
        ("authentication", "is not a known op code: authentication; did you mean 'METADATA_AUTHENTICATION'?"),
        ("metadata_device_id", "is not a known op code: metadata_device_id; did you mean 'METADATA_DEVICE_ID'?"),
        ("EXPIRY", "is not a known op code: EXPIRY (it takes METADATA_AUTHENTICATION, METADATA_AUTHORIZATION, "
                   "METADATA_DEVICE_ID, METADATA_USER_META, or 0–3)"),
    ]:
        notes, answer = client.exchange("getMetadata", {"opCode": sent})
        assert notes == [] and answer["error"]["code"] == -32602, answer
        assert answer["error"]["data"] == {"param": "opCode", "reason": reason}, answer
    assert client.call("getMetadata", {"opCode": "METADATA_AUTHENTICATION"})["key"] == 0
    client.close()
