"""The packages as a user installs them: Clients/debian/build-deb.sh and Clients/python/build-wheel.sh build them from
this clone (release, static; once per session), then

* the .deb is installed (with CI=true as root: `apt-get install ./passbridge_*.deb` on this machine, purged again at
  the end of this file, so no later suite finds it in /usr/bin; otherwise `dpkg -x` into a scratch root, which
  changes nothing here) and one login + authorization goes through the installed daemon, started by
  `systemd-socket-activate` with the ExecStart= of the installed unit;
* the wheels go into a fresh venv with `pip install --no-index`, and with no passbridge on PATH
  `AccessEnabler.spawn("--backend", "emulator")` runs the bundled daemon and the emulator wheel's pass-emulator for
  one login + authorization; the client without any daemon raises DaemonNotFound saying where it looked;
* the binaries, rpc.discover, the .deb, the wheels, the Python and Node packages all carry info.version of
  Protocol/openrpc.json;
* the checkers packagers run find nothing: lintian (no error, no warning) on the .deb, check-wheel-contents and
  twine check on both wheels, and no installed binary carries a RUNPATH or RPATH (readelf -d).
"""
import base64
import grp
import gzip
import hashlib
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from typing import Dict, Iterator, List, Optional

import pytest

from clients_support import ROOT, emulator_url, statement  # noqa: F401  (fixture)

import browser  # noqa: E402  (Clients/python/examples, put on sys.path by clients_support)
import passbridge  # noqa: E402

VERSION = json.loads((ROOT / "Protocol/openrpc.json").read_text())["info"]["version"]
#: Install the .deb on this machine for real: only on a CI machine, as root.
REAL_INSTALL = os.environ.get("CI") == "true" and os.geteuid() == 0
pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("systemd-socket-activate") is None,
                                reason="dpkg-deb or systemd-socket-activate missing (Tests/install-deps.sh --with-test-tools)")


def run(argv: List[str], timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{argv}: {result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="session")
def packages(tmp_path_factory) -> Dict[str, pathlib.Path]:
    """Builds the .deb and the two wheels with their scripts, once: {"deb", "wheel", "emulator_wheel"}."""
    out = tmp_path_factory.mktemp("packages")
    deb = run(["bash", str(ROOT / "Clients/debian/build-deb.sh"), "--out", str(out)], timeout=3600, cwd=ROOT)
    wheels = run(["bash", str(ROOT / "Clients/python/build-wheel.sh"), "--out", str(out)], timeout=3600, cwd=ROOT)
    built = {"deb": pathlib.Path(deb.stdout.strip().splitlines()[-1])}
    built["wheel"], built["emulator_wheel"] = (pathlib.Path(p) for p in wheels.stdout.strip().splitlines()[-2:])
    assert built["deb"].name == f"passbridge_{VERSION}_amd64.deb"
    tag = f"py3-none-linux_{os.uname().machine}"
    assert built["wheel"].name == f"passbridge-{VERSION}-{tag}.whl"
    assert built["emulator_wheel"].name == f"passbridge_emulator-{VERSION}-{tag}.whl"
    return built


def control_field(deb: pathlib.Path, name: str) -> str:
    return run(["dpkg-deb", "-f", str(deb), name]).stdout.strip()


# ---- one version ------------------------------------------------------------------------------------------------

def test_one_version_everywhere(bin_dir, packages):
    for binary in ("passbridge", "passbridge-relay", "pass-emulator"):
        assert run([str(bin_dir / binary), "--version"]).stdout.strip() == f"{binary} {VERSION}"
    discover = run([str(bin_dir / "passbridge"), "--stdio"], input='{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}\n')
    assert json.loads(discover.stdout.splitlines()[0])["result"]["info"]["version"] == VERSION
    assert control_field(packages["deb"], "Version") == VERSION
    for wheel in (packages["wheel"], packages["emulator_wheel"]):
        with zipfile.ZipFile(wheel) as archive:
            metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            assert f"Version: {VERSION}" in archive.read(metadata).decode().splitlines()
    assert passbridge.__version__ == VERSION
    assert json.loads((ROOT / "Clients/node/package.json").read_text())["version"] == VERSION


# ---- the .deb ---------------------------------------------------------------------------------------------------

def test_deb_holds_the_static_binaries_units_and_man_page(packages, bin_dir, tmp_path):
    deb = packages["deb"]
    paths = {line.split()[-1].lstrip(".") for line in run(["dpkg-deb", "-c", str(deb)]).stdout.splitlines()}
    for path in ("/usr/bin/passbridge", "/usr/bin/passbridge-relay", "/usr/bin/passbridge-call",
                 "/usr/lib/systemd/system/passbridge.socket", "/usr/lib/systemd/system/passbridge.service",
                 "/usr/lib/sysusers.d/passbridge.conf", "/usr/share/man/man1/passbridge.1.gz",
                 "/usr/share/man/man1/passbridge-relay.1.gz", "/usr/share/man/man1/passbridge-call.1.gz",
                 "/usr/share/doc/passbridge/copyright", "/usr/share/doc/passbridge/changelog.gz",
                 "/usr/share/doc/passbridge/README.md"):
        assert path in paths
    root = tmp_path / "root"
    run(["dpkg-deb", "-x", str(deb), str(root)])
    # The man page documents every flag of --help.
    page = gzip.decompress((root / "usr/share/man/man1/passbridge.1.gz").read_bytes()).decode()
    assert page.startswith(".TH PASSBRIDGE 1 ") and f'"passbridge {VERSION}"' in page
    flags = {word.rstrip(",") for line in run([str(bin_dir / "passbridge"), "--help"]).stdout.splitlines()
             for word in line.split()[:2] if word.startswith("--")}
    assert "--socket-group" in flags and all(flag.replace("-", "\\-") in page for flag in flags)
    # So do the relay's and the shell client's pages, each of its own --help.
    relay = gzip.decompress((root / "usr/share/man/man1/passbridge-relay.1.gz").read_bytes()).decode()
    assert relay.startswith(".TH PASSBRIDGE\\-RELAY 1 ") and "SOCKET" in relay
    call = gzip.decompress((root / "usr/share/man/man1/passbridge-call.1.gz").read_bytes()).decode()
    assert call.startswith(".TH PASSBRIDGE\\-CALL 1 ")
    call_flags = {word for line in run(["bash", str(ROOT / "Clients/shell/passbridge-call"), "--help"]).stdout.splitlines()
                  for word in line.split()[:1] if word.startswith("--")}
    assert "--socket" in call_flags and all(flag.replace("-", "\\-") in call for flag in call_flags)
    # The copyright file is machine-readable (DEP-5) and says whose and which licence.
    copyright_text = (root / "usr/share/doc/passbridge/copyright").read_text()
    assert copyright_text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
    assert "\nCopyright: " in copyright_text and "\nLicense: Apache-2.0\n" in copyright_text
    # The systemd units point at the packaged binary.
    service = (root / "usr/lib/systemd/system/passbridge.service").read_text()
    assert "ExecStart=/usr/bin/passbridge --socket /run/passbridge/passbridge.sock " in service
    assert "/usr/local" not in service
    # Depends names the package of every shared object the binaries need, and of the three opened with dlopen.
    depends = {entry.split()[0] for entry in control_field(deb, "Depends").split(", ")}
    for binary in ("passbridge", "passbridge-relay"):
        needed = [line.split("[")[1].rstrip("]") for line in run(["readelf", "-d", str(root / "usr/bin" / binary)]).stdout
                  .splitlines() if "(NEEDED)" in line]
        assert "libswiftCore.so" not in needed and "libFoundation.so" not in needed  # the Swift runtime is static
        for soname in needed + ["libcurl.so.4", "libcrypto.so.3", "libsqlite3.so.0"]:
            owner = owning_package(soname)
            assert owner in depends, f"{binary} needs {soname} from {owner}, not in Depends: {sorted(depends)}"


def test_lintian_finds_no_error_and_no_warning(packages):
    """Debian's own checker on the .deb: no error and no warning (pedantic and info tags are shown when the test fails,
    not required to be absent)."""
    if shutil.which("lintian") is None:
        pytest.fail("lintian missing (Tests/install-deps.sh --with-test-tools installs it)")
    result = subprocess.run(["lintian", "--display-info", "--pedantic", "--no-tag-display-limit", str(packages["deb"])],
                            capture_output=True, text=True, timeout=600)
    tags = [line for line in result.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert tags == [], result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_installed_binary_has_a_runpath_or_rpath(packages, tmp_path):
    """A binary in /usr/bin that searches beside itself would load a libcurl.so.4 dropped there before the system's:
    neither the .deb's binaries nor the wheels' carry a RUNPATH or RPATH (readelf -d)."""
    root = tmp_path / "root"
    run(["dpkg-deb", "-x", str(packages["deb"]), str(root)])
    binaries = [root / "usr/bin/passbridge", root / "usr/bin/passbridge-relay"]
    for wheel in (packages["wheel"], packages["emulator_wheel"]):
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if "/_bin/" in name:
                    target = tmp_path / wheel.stem / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
                    binaries.append(target)
    assert len(binaries) == 5
    for binary in binaries:
        dynamic = run(["readelf", "-d", str(binary)]).stdout
        assert "(NEEDED)" in dynamic, binary  # readelf did read a dynamic section
        assert "(RUNPATH)" not in dynamic and "(RPATH)" not in dynamic, f"{binary}:\n{dynamic}"


def owning_package(soname: str) -> str:
    """The Debian package that holds `soname` on this machine (dpkg -S; /lib is /usr/lib with merged /usr)."""
    for folder in ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64"):
        found = subprocess.run(["dpkg", "-S", f"{folder}/{soname}"], capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split(":")[0]
    raise AssertionError(f"no package holds {soname}")


class Installed:
    """The .deb installed under `root` ("/" for a real install); `seconds`: how long the install took."""

    def __init__(self, root: pathlib.Path, seconds: float) -> None:
        self.root, self.seconds = root, seconds


@pytest.fixture(scope="module")
def installed(packages, tmp_path_factory) -> Iterator[Installed]:
    deb = packages["deb"]
    if not REAL_INSTALL:
        root = tmp_path_factory.mktemp("debroot")
        started = time.monotonic()
        run(["dpkg-deb", "-x", str(deb), str(root)])
        yield Installed(root, time.monotonic() - started)
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    started = time.monotonic()
    run(["apt-get", "install", "-y", "-q", str(deb)], timeout=600, env=env,
        stdin=subprocess.DEVNULL)
    try:
        yield Installed(pathlib.Path("/"), time.monotonic() - started)
    finally:
        run(["apt-get", "purge", "-y", "-q", "passbridge"], timeout=600, env=env, stdin=subprocess.DEVNULL)


def test_real_install_creates_the_user_and_enables_the_socket(installed):
    if not REAL_INSTALL:
        pytest.skip("the .deb is installed for real only with CI=true as root (dpkg -x into a scratch root here)")
    assert run(["getent", "passwd", "passbridge"]).stdout.split(":")[5] == "/var/lib/passbridge"
    assert oct(os.stat("/etc/passbridge").st_mode & 0o777) == "0o700"
    wants = pathlib.Path("/etc/systemd/system/sockets.target.wants/passbridge.socket")
    assert wants.is_symlink()  # to /lib/systemd/system or /usr/lib/systemd/system: the same folder, merged /usr
    assert os.path.realpath(wants) == os.path.realpath("/usr/lib/systemd/system/passbridge.socket")
    assert pathlib.Path("/usr/share/man/man1/passbridge.1.gz").is_file()
    assert run(["/usr/bin/passbridge", "--version"]).stdout.strip() == f"passbridge {VERSION}"


def unit_command(root: pathlib.Path, credentials: pathlib.Path, group: Optional[str]) -> List[str]:
    """The ExecStart= of the installed passbridge.service, as systemd would run it: `%d` is the credentials folder;
    the binary is taken from `root`; `group` (when given) replaces the --socket-group value."""
    service = (root / "usr/lib/systemd/system/passbridge.service").read_text()
    line = next(line for line in service.splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(line[len("ExecStart="):].replace("%d", str(credentials)))
    assert argv[0] == "/usr/bin/passbridge"
    argv[0] = str(root / "usr/bin/passbridge")
    if group is not None:
        argv[argv.index("--socket-group") + 1] = group
    return argv


class WebApp(passbridge.EntitlementDelegate):
    """The demo's web-view host: picks MockMVPD and logs in as demo/demo with the scripted browser."""

    client: "passbridge.AccessEnabler"

    def displayProviderDialog(self, mvpds):  # type: ignore[no-untyped-def]
        self.client.setSelectedProvider("MockMVPD")

    def navigateToUrl(self, url, useSVC=None):  # type: ignore[no-untyped-def]
        fill = {"username": "demo", "password": "demo"}
        reached = browser.Browser().run(url, fill.get, passbridge.ADOBEPASS_REDIRECT_URL)
        assert reached is not None
        self.client.handleExternalURL(reached)


def test_installed_deb_daemon_is_socket_activated_and_logs_in_and_authorizes(installed, bin_dir, emulator_url):
    work = pathlib.Path(tempfile.mkdtemp(prefix="pb-deb-", dir="/tmp"))  # a socket path stays under 108 bytes
    try:
        credentials, state, sock = work / "credentials", work / "state", work / "passbridge.sock"
        credentials.mkdir(mode=0o700)
        (credentials / "software-statement").write_text(statement() + "\n")
        state.mkdir(mode=0o700)
        # Without the passbridge group on this machine the daemon gets the test's own group instead.
        argv = unit_command(installed.root, credentials, None if REAL_INSTALL else grp.getgrgid(os.getgid()).gr_name)
        if REAL_INSTALL:
            # As the unit's User=/Group=: setpriv execs in place, so LISTEN_PID stays the daemon's pid.
            work.chmod(0o711)
            for path in (credentials, credentials / "software-statement", state):
                shutil.chown(path, "passbridge", "passbridge")
            argv = ["setpriv", "--reuid=passbridge", "--regid=passbridge", "--init-groups"] + argv
        started = time.monotonic()
        daemon = subprocess.Popen(["systemd-socket-activate", "-l", str(sock), "-E", f"STATE_DIRECTORY={state}",
                                   *argv, "--backend", emulator_url],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        failure: Optional[BaseException] = None
        try:
            deadline = time.monotonic() + 10
            while not sock.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            app = WebApp()
            with passbridge.AccessEnabler.connect(str(sock), delegate=app, timeout=30) as ae:
                app.client = ae
                assert ae.init() == {}
                first_answer = time.monotonic() - started
                assert ae.setRequestor("REF")["status"] == 1
                authorization = ae.getAuthorization("ch1")
                assert authorization.get("resource") == "ch1" and authorization.get("token"), authorization
                assert ae.checkAuthentication()["status"] == 1
        except Exception as error:
            failure = error
        finally:
            daemon.terminate()
            _, err = daemon.communicate(timeout=30)
        if failure is not None:
            raise AssertionError(f"the daemon's log:\n{err}") from failure
        check = run([str(bin_dir / "pass-emulator"), "verify-token", str(authorization["token"]), "--resource", "ch1",
                     "--url", emulator_url])
        assert check.stdout.startswith("valid"), check.stdout
        assert "serving the socket inherited from systemd (fd 3)" in err, err
        assert daemon.returncode == 0, err
        assert any(state.iterdir())  # the login went to $STATE_DIRECTORY
        print(f"\n.deb installed in {installed.seconds:.2f} s; first answer {first_answer * 1000:.0f} ms after the "
              f"socket-activated start")
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- the wheels -------------------------------------------------------------------------------------------------

def test_wheels_are_well_formed(packages):
    client_executables = {"passbridge/_bin/passbridge", "passbridge/_bin/passbridge-relay",
                          f"passbridge-{VERSION}.data/scripts/passbridge-call"}
    for wheel, executables in ((packages["wheel"], client_executables),
                               (packages["emulator_wheel"], {"passbridge/_bin/pass-emulator"})):
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
            rows = [line.split(",") for line in archive.read(record_name).decode().splitlines()]
            assert sorted(row[0] for row in rows) == sorted(names)
            for path, digest, size in rows:
                if path == record_name:
                    assert (digest, size) == ("", "")
                    continue
                data = archive.read(path)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert (digest, int(size)) == (f"sha256={expected}", len(data)), path
            assert {n for n in names if (archive.getinfo(n).external_attr >> 16) & 0o111} == executables
            wheel_file = archive.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
            assert "Root-Is-Purelib: false" in wheel_file
            assert f"Tag: py3-none-linux_{os.uname().machine}" in wheel_file
    with zipfile.ZipFile(packages["wheel"]) as archive:
        assert {"passbridge/__init__.py", "passbridge/locate.py", "passbridge/py.typed", "passbridge/browser.py",
                "passbridge/_commands.py"} <= set(archive.namelist())
        assert archive.read("passbridge/browser.py") == (ROOT / "Clients/python/examples/browser.py").read_bytes()
        assert archive.read(f"passbridge-{VERSION}.data/scripts/passbridge-call") == \
            (ROOT / "Clients/shell/passbridge-call").read_bytes()
        assert archive.read(f"passbridge-{VERSION}.dist-info/entry_points.txt").decode() == (
            "[console_scripts]\npassbridge = passbridge._commands:daemon\npassbridge-relay = passbridge._commands:relay\n")
    with zipfile.ZipFile(packages["emulator_wheel"]) as archive:
        assert archive.read(f"passbridge_emulator-{VERSION}.dist-info/entry_points.txt").decode() == (
            "[console_scripts]\npass-emulator = passbridge._emulator:main\n")
        assert archive.read("passbridge/_emulator.py") == (ROOT / "Clients/python/passbridge/_emulator.py").read_bytes()
    with zipfile.ZipFile(packages["wheel"]) as archive:
        assert "passbridge/_emulator.py" not in archive.namelist()


def test_both_wheels_pass_check_wheel_contents_and_twine_check(packages):
    """The checkers Python packagers run before an upload: check-wheel-contents (every check, none disabled) and
    twine check (the metadata and the README a package index would render), from the test venv."""
    tools = pathlib.Path(sys.executable).parent
    for wheel in (packages["wheel"], packages["emulator_wheel"]):
        contents = subprocess.run([str(tools / "check-wheel-contents"), str(wheel)], capture_output=True, text=True,
                                  timeout=120)
        assert contents.returncode == 0 and contents.stdout.strip() == f"{wheel}: OK", contents.stdout + contents.stderr
        twine = subprocess.run([str(tools / "twine"), "check", "--strict", str(wheel)], capture_output=True, text=True,
                               timeout=120)
        assert twine.returncode == 0 and "PASSED" in twine.stdout and "WARNING" not in twine.stdout, \
            twine.stdout + twine.stderr


@pytest.fixture(scope="session")
def venv(packages, tmp_path_factory) -> pathlib.Path:
    """A fresh venv with `pip install --no-index 'passbridge[emulator]'` from the built wheels."""
    root = tmp_path_factory.mktemp("venv")
    run(["python3", "-m", "venv", str(root)], timeout=300)
    run([str(root / "bin/pip"), "install", "-q", "--disable-pip-version-check", "--no-index", "--find-links",
         str(packages["wheel"].parent), "passbridge[emulator]"], timeout=300)
    return root


def clean_env(tmp: pathlib.Path) -> Dict[str, str]:
    """An environment with no passbridge anywhere on PATH (an empty folder) and no PASSBRIDGE."""
    empty = tmp / "empty-path"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PASSBRIDGE", "PYTHONPATH", "PASSBRIDGE_BIN_DIR")}
    env["PATH"] = str(empty)
    return env


WHEEL_APP = textwrap.dedent("""
    import json, sys, time
    started = time.monotonic()
    sys.path.insert(0, sys.argv[1])  # the repository's examples: the scripted browser only
    import browser
    import passbridge

    class App(passbridge.EntitlementDelegate):
        def displayProviderDialog(self, mvpds):
            ae.setSelectedProvider("MockMVPD")

        def navigateToUrl(self, url, useSVC=None):
            ae.handleExternalURL(browser.Browser().run(url, {"username": "demo", "password": "demo"}.get,
                                                       passbridge.ADOBEPASS_REDIRECT_URL))

    daemon = passbridge.find_daemon()
    ae = passbridge.AccessEnabler.spawn("--backend", "emulator", delegate=App())
    ae.init()
    first = time.monotonic() - started
    ae.setRequestor("REF")
    result = ae.getAuthorization("ch1")
    print(json.dumps({"package": passbridge.__file__, "daemon": daemon, "result": result, "first": first,
                      "exit": ae.close()}))
""")


def test_wheel_spawns_its_bundled_daemon_with_the_emulator_and_nothing_on_path(venv, tmp_path):
    app = tmp_path / "app.py"
    app.write_text(WHEEL_APP)
    out = run([str(venv / "bin/python"), str(app), str(ROOT / "Clients/python/examples")], timeout=120, cwd=tmp_path,
              env=clean_env(tmp_path))
    report = json.loads(out.stdout.strip().splitlines()[-1])
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert report["package"] == str(site / "passbridge/__init__.py")
    assert report["daemon"] == str(site / "passbridge/_bin/passbridge")
    assert (site / "passbridge/_bin/pass-emulator").exists()
    assert report["result"]["resource"] == "ch1" and report["result"]["token"], report
    assert report["exit"] == 0
    print(f"\nwheel: first answer {report['first'] * 1000:.0f} ms after the app started")


def test_the_wheel_puts_passbridge_state_passbridge_call_and_the_browser_on_the_venvs_path(venv, tmp_path):
    """What a new user reached for after `pip install`: `passbridge state list`, `passbridge-call` (one-shot over
    stdio, and `dev` with a call over its socket through the relay) and the scripted browser, with nothing of the
    repository's build on PATH."""
    env = clean_env(tmp_path)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"  # bash and coreutils, and the venv's commands
    env["XDG_STATE_HOME"] = str(tmp_path / "xdg")
    listed = run([str(venv / "bin/passbridge"), "state", "list"], env=env)  # the default directory, not made yet
    assert listed.stdout == f"no logins (no store in {tmp_path / 'xdg/passbridge'})\n", listed.stdout
    version = run(["passbridge-relay", "--version"], env=env)
    assert version.stdout.strip() == f"passbridge-relay {VERSION}"
    one_shot = subprocess.run(["passbridge-call", "--requestor", "REF", "checkAuthentication"], capture_output=True,
                              text=True, timeout=120, env=dict(env, PASSBRIDGE_ARGS="--backend emulator"))
    assert one_shot.returncode == 1, one_shot.stderr
    assert json.loads(one_shot.stdout) == {"status": 0, "errorCode": "User Not Authenticated Error"}
    dev = tmp_path / "dev"
    started = run(["passbridge-call", "dev", "--state-dir", str(dev)], env=env, timeout=120)
    try:
        socket_path = started.stdout.strip().split("=", 1)[1]
        over_socket = subprocess.run(["passbridge-call", "--socket", socket_path, "--requestor", "REF", "checkAuthentication"],
                                     capture_output=True, text=True, timeout=120, env=env)
        assert json.loads(over_socket.stdout) == {"status": 0, "errorCode": "User Not Authenticated Error"}, over_socket.stderr
    finally:
        run(["passbridge-call", "dev", "stop", "--state-dir", str(dev)], env=env, timeout=60)
    helped = run([str(venv / "bin/python"), "-m", "passbridge.browser", "--help"], env=env)
    assert "redirect URL" in helped.stdout


def test_without_any_daemon_spawn_raises_daemon_not_found_saying_where_it_looked(packages, tmp_path):
    # The wheel's Python files without its _bin folder: the client as a source install has it.
    site = tmp_path / "site"
    with zipfile.ZipFile(packages["wheel"]) as archive:
        archive.extractall(site, [n for n in archive.namelist() if n.startswith("passbridge/") and "/_bin/" not in n])
    script = textwrap.dedent("""
        import passbridge
        try:
            passbridge.AccessEnabler.spawn("--backend", "emulator")
        except passbridge.DaemonNotFound as error:
            assert isinstance(error, passbridge.Error) and isinstance(error, FileNotFoundError)
            print(error)
    """)
    env = dict(clean_env(tmp_path), PYTHONPATH=str(site))
    message = run([sys.executable, "-c", script], env=env).stdout.strip()
    assert message.startswith("passbridge daemon not found; looked at: $PASSBRIDGE (not set); ")
    assert f"{site}/passbridge/_bin/passbridge (this install of the package carries no daemon)" in message
    assert f"'passbridge' in PATH={tmp_path / 'empty-path'}" in message
    assert "pip install passbridge-VERSION-py3-none-linux_x86_64.whl" in message
    assert "apt install ./passbridge_VERSION_amd64.deb" in message


def test_find_daemon_takes_the_argument_then_passbridge_then_the_bundled_one_then_path(tmp_path):
    fake = tmp_path / "bin" / "passbridge"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    env = {"PATH": str(fake.parent)}
    assert passbridge.find_daemon(env=env) == str(fake)  # the source tree bundles none: PATH
    assert passbridge.find_daemon(env=dict(env, PASSBRIDGE="/bin/true")) == "/bin/true"
    assert passbridge.find_daemon("/bin/true", env=dict(env, PASSBRIDGE=str(fake))) == "/bin/true"
    with pytest.raises(passbridge.DaemonNotFound) as wrong:
        passbridge.find_daemon(env=dict(env, PASSBRIDGE=str(tmp_path / "nothing")))
    assert wrong.value.looked == [f"$PASSBRIDGE {tmp_path / 'nothing'} (not an executable file)"]
    with pytest.raises(passbridge.DaemonNotFound) as missing:
        passbridge.find_daemon("pb-not-there", env=env)
    assert missing.value.looked == [f"executable= 'pb-not-there' in PATH={fake.parent}"]
