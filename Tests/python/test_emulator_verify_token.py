"""`pass-emulator verify-token` (Sources/PassEmulator/README.md): accepts a fresh media token, rejects tampered, expired and wrong-resource ones."""
import base64
import subprocess

from emulator_fixtures import _fresh_emulator, emulator, token  # noqa: F401 (fixtures)


def media_token(emulator, token, resource="ch1"):
    emulator.login(token)
    decision = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": [resource]}).json()["decisions"][0]
    assert decision["authorized"] is True
    return decision["token"]["serializedToken"]


def verify(emulator, *args):
    result = subprocess.run([str(emulator.binary), "verify-token", *args], capture_output=True, text=True, timeout=30)
    return result.returncode, result.stdout + result.stderr


def test_fresh_token_is_valid_by_url_and_by_public_key_file(emulator, token, tmp_path):
    serialized = media_token(emulator, token)
    code, output = verify(emulator, serialized, "--resource", "ch1", "--url", emulator.base)
    assert code == 0, output
    assert verify(emulator, serialized, "--url", emulator.base)[0] == 0
    pem = emulator.admin("GET", "public-key")
    assert pem.status == 200 and pem.text.startswith("-----BEGIN PUBLIC KEY-----")
    key_file = tmp_path / "key.pem"
    key_file.write_text(pem.text)
    assert verify(emulator, serialized, "--resource", "ch1", "--public-key", str(key_file))[0] == 0


def test_tampered_token_is_rejected_for_its_signature(emulator, token):
    serialized = media_token(emulator, token)
    xml = base64.b64decode(serialized).decode().replace("<resourceID>ch1</resourceID>", "<resourceID>ch2</resourceID>")
    code, output = verify(emulator, base64.b64encode(xml.encode()).decode(), "--resource", "ch2", "--url", emulator.base)
    assert code == 1 and "signature" in output


def test_expired_token_is_rejected(emulator, token):
    serialized = media_token(emulator, token)
    emulator.advance(7 * 60 + 1)
    code, output = verify(emulator, serialized, "--resource", "ch1", "--url", emulator.base)
    assert code == 1 and "expired" in output


def test_wrong_resource_is_rejected(emulator, token):
    serialized = media_token(emulator, token)
    code, output = verify(emulator, serialized, "--resource", "ch2", "--url", emulator.base)
    assert code == 1 and "resource" in output


def test_garbage_and_usage(emulator):
    code, output = verify(emulator, "bm90IGEgdG9rZW4=", "--url", emulator.base)
    assert code == 1 and "format" in output
    assert verify(emulator, "x")[0] == 2  # neither --url nor --public-key
