"""Clients/systemd: the install script builds what it installs (release build), into a scratch root; the installed
units pass `systemd-analyze verify`; the installed daemon serves a socket handed over by `systemd-socket-activate`
as the unit would. (No systemd as PID 1 here: enabling is checked by its symlink, starting by socket activation.)
"""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import time

import pytest

from clients_support import ROOT, emulator_url, statement  # noqa: F401  (fixture)

SYSTEMD = ROOT / "Clients" / "systemd"
pytestmark = pytest.mark.skipif(shutil.which("systemd-analyze") is None or shutil.which("systemd-socket-activate") is None,
                                reason="systemd tools are not installed (Tests/install-deps.sh --with-test-tools)")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> pathlib.Path:
    """Runs install.sh --root into a scratch root, once for the module."""
    work = tmp_path_factory.mktemp("systemd")
    (work / "statement.jwt").write_text(statement() + "\n")
    root = work / "root"
    run = subprocess.run(["bash", str(SYSTEMD / "install.sh"), "--root", str(root), "--software-statement",
                          str(work / "statement.jwt")], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    version = json.loads((ROOT / "Protocol/openrpc.json").read_text())["info"]["version"]
    assert run.stdout.strip().splitlines()[-1] == f"installed passbridge {version} into {root}"
    return root


def mode(path: pathlib.Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_install_builds_and_installs_everything(installed):
    binary = installed / "usr/local/bin/passbridge"
    assert mode(binary) == 0o755
    release = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
    assert binary.read_bytes() == (pathlib.Path(release) / "passbridge").read_bytes()
    assert mode(installed / "etc/passbridge") == 0o700
    assert mode(installed / "etc/passbridge/software-statement") == 0o600
    assert (installed / "etc/passbridge/software-statement").read_text().strip() == statement()
    assert any(line.startswith("passbridge:") for line in (installed / "etc/passwd").read_text().splitlines())
    assert any(line.startswith("passbridge:") for line in (installed / "etc/group").read_text().splitlines())
    wants = installed / "etc/systemd/system/sockets.target.wants/passbridge.socket"
    assert wants.is_symlink() and os.readlink(wants).endswith("/etc/systemd/system/passbridge.socket")


def test_installed_units_verify(installed, tmp_path):
    units = tmp_path / "units"
    units.mkdir()
    for name in ("passbridge.socket", "passbridge.service"):
        text = (installed / "etc/systemd/system" / name).read_text()
        (units / name).write_text(text.replace("/usr/local/bin/passbridge", str(installed / "usr/local/bin/passbridge")))
    run = subprocess.run(["systemd-analyze", "verify", str(units / "passbridge.socket"), str(units / "passbridge.service")],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, SYSTEMD_LOG_LEVEL="warning"))
    problems = [line for line in run.stderr.splitlines() if "passbridge" in line]
    assert run.returncode == 0 and problems == [], run.stderr


def test_installed_daemon_serves_a_socket_activated_connection(installed, emulator_url, tmp_path):
    sock = tmp_path / "pb.sock"
    state = tmp_path / "state"
    daemon = subprocess.Popen(
        ["systemd-socket-activate", "-l", str(sock), "-E", f"STATE_DIRECTORY={state}",
         str(installed / "usr/local/bin/passbridge"), "--socket", str(sock), "--backend", emulator_url,
         "--software-statement", f"@{installed / 'etc/passbridge/software-statement'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        env = dict(os.environ, PASSBRIDGE=str(installed / "usr/local/bin/passbridge"))
        run = subprocess.run([str(ROOT / "Clients/shell/passbridge-call"), "--socket", str(sock), "--requestor", "REF",
                              "checkAuthentication"], env=env, capture_output=True, text=True, timeout=60)
        # Not logged in is an answered call whose outcome failed: exit 1, the result on stdout, the reason on stderr.
        assert (run.returncode, run.stdout) == (1, '{"status":0,"errorCode":"User Not Authenticated Error"}\n'), run.stderr
        assert run.stderr == "passbridge-call: checkAuthentication failed: User Not Authenticated Error\n"
        assert mode(state) == 0o700 and any(state.iterdir())
    finally:
        daemon.terminate()
        _, err = daemon.communicate(timeout=30)
    assert "serving the socket inherited from systemd (fd 3)" in err
    assert daemon.returncode == 0
    assert sock.exists()  # socket activation: the daemon never unlinks the socket it was handed


def test_install_refuses_bad_arguments():
    run = subprocess.run(["bash", str(SYSTEMD / "install.sh"), "--bogus"], capture_output=True, text=True, timeout=30)
    assert (run.returncode, run.stderr) == (
        2, "install.sh: unknown argument --bogus (see the comment at the top of Clients/systemd/install.sh)\n")
