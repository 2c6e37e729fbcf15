"""Helpers for the client suites: an emulator per test, a development software statement, the client package."""
import base64
import json
import pathlib
import subprocess
import sys
from typing import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))
sys.path.insert(0, str(ROOT / "Clients" / "python" / "examples"))


def statement() -> str:
    """A software statement the emulator accepts (it checks the shape, not the signature)."""
    part = lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("=")  # noqa: E731
    return ".".join([part(b'{"alg":"RS256"}'), part(json.dumps({"iss": "clients-test"}).encode()), part(b"sig")])


@pytest.fixture
def emulator_url(bin_dir: pathlib.Path) -> Iterator[str]:
    """A fresh `pass-emulator --port 0`; its base URL."""
    proc = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    yield url
    proc.terminate()
    proc.wait(timeout=10)
