"""Helpers for the client suites: an emulator per test, a development software statement, the client package."""
import base64
import json
import os
import pathlib
import subprocess
import sys
from typing import Collection, Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))
sys.path.insert(0, str(ROOT / "Clients" / "python" / "examples"))


#: The commands PassBridge installs (Clients/debian/build-deb.sh puts them in /usr/bin).
PASSBRIDGE_COMMANDS = ("passbridge", "passbridge-relay", "passbridge-call", "pass-emulator", "passbridge-test-daemon")


def path_without(commands: Collection[str], farm: pathlib.Path) -> str:
    """A PATH with every command of $PATH but `commands`: one directory, `farm`, of links to the first of each name.
    Dropping the directories that hold a command would drop /usr/bin, and bash with it, wherever the .deb (or
    qrencode) is installed there."""
    farm.mkdir(parents=True, exist_ok=True)
    for directory in os.environ["PATH"].split(os.pathsep):
        try:
            entries = list(os.scandir(directory or "."))
        except OSError:
            continue
        for entry in entries:
            link = farm / entry.name
            if entry.name not in commands and not os.path.lexists(link) and os.access(entry.path, os.X_OK):
                link.symlink_to(entry.path)
    return str(farm)


@pytest.fixture(scope="session")
def path_without_passbridge(tmp_path_factory: pytest.TempPathFactory) -> str:
    """$PATH without any of PASSBRIDGE_COMMANDS, even where the .deb is installed."""
    return path_without(PASSBRIDGE_COMMANDS, tmp_path_factory.mktemp("path-without-passbridge"))


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
