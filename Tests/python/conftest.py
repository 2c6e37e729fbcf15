"""Shared fixtures for the end-to-end suites: where the built binaries are."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bin_dir() -> pathlib.Path:
    """The folder holding passbridge and pass-emulator (PASSBRIDGE_BIN_DIR, else swift's debug bin path)."""
    env = os.environ.get("PASSBRIDGE_BIN_DIR")
    if env:
        return pathlib.Path(env)
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return pathlib.Path(out.stdout.strip())
