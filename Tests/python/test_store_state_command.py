"""`passbridge state list|reset|logout` (never a token or a secret; a reset says the logins stay at Adobe, a logout
ends them there first), and `--backend emulator` kept apart from the production store."""
import contextlib
import datetime
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from rpc_helper import SOFTWARE_STATEMENT, StdioDaemon, daemon_args
from test_bridge_flows import login, ready

ROOT = pathlib.Path(__file__).resolve().parents[2]


def state(bin_dir, *args, env=None):
    return subprocess.run([str(bin_dir / "passbridge"), "state", *args], capture_output=True, text=True, timeout=30, env=env)


def test_state_list_shows_logins_without_secrets_and_reset_forgets_them(bin_dir, emulator, tmp_path):
    directory = tmp_path / "state"
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, directory))
    ready(daemon)
    login(daemon)
    token = daemon.call("getAuthorization", {"resource": "ch1"})["token"]
    assert daemon.stop() == 0

    listed = state(bin_dir, "list", "--state-dir", str(directory))
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.strip().splitlines()
    assert header.split() == ["REQUESTOR", "MVPD", "USER", "EXPIRES", "DEVICE", "BACKEND"]
    fields = row.split()
    assert fields[:3] == ["REF", "MockMVPD", "demo-user-0001"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fields[3])
    assert fields[5] == emulator.base
    # Which store, on stderr (a fleet operator's pass: without --store, the default directory's table passed for the
    # fleet's).
    assert listed.stderr == f"passbridge state: the logins of {directory}/passbridge.sqlite\n"
    import sqlite3
    with contextlib.closing(sqlite3.connect(directory / "passbridge.sqlite")) as db:  # closed: see the reset below
        secrets = [value for row in db.execute("SELECT client_secret FROM client_credentials UNION ALL SELECT token FROM access_tokens")
                   for value in row]
        [(not_after_ms,)] = db.execute("SELECT not_after_ms FROM profiles").fetchall()
    expires = datetime.datetime.fromtimestamp(not_after_ms // 1000, datetime.timezone.utc)
    assert fields[3] == expires.strftime("%Y-%m-%dT%H:%M:%SZ"), "EXPIRES is the profile's notAfter, in UTC"
    for secret in secrets + [token, SOFTWARE_STATEMENT]:
        assert secret not in listed.stdout + listed.stderr

    other = state(bin_dir, "reset", "--state-dir", str(directory), "--requestor", "OTHER")
    assert other.stdout.strip().startswith("deleted 0 logins")
    assert len(state(bin_dir, "list", "--state-dir", str(directory)).stdout.strip().splitlines()) == 2
    reset = state(bin_dir, "reset", "--state-dir", str(directory), "--requestor", "REF")
    assert reset.returncode == 0 and reset.stdout.startswith("deleted 1 login from ")
    # The store is closed as the daemon closes it: no write-ahead log is left, and passbridge.sqlite alone (what a
    # backup copies) no longer holds the login.
    assert sorted(path.name for path in directory.iterdir() if path.name.startswith("passbridge.sqlite")) == ["passbridge.sqlite"]
    with contextlib.closing(sqlite3.connect(f"file:{directory / 'passbridge.sqlite'}?mode=ro&immutable=1", uri=True)) as copy:
        assert copy.execute("SELECT count(*) FROM profiles").fetchone() == (0,)
    # It says what it did not do: the login stays at Adobe.
    assert "here only: Adobe still has it until a logout" in reset.stdout and "passbridge state logout" in reset.stdout
    helped = state(bin_dir, "--help").stdout
    assert "Adobe still has the logins until a logout" in " ".join(helped.split())
    store = directory / "passbridge.sqlite"
    assert state(bin_dir, "list", "--state-dir", str(directory)).stdout == f"no logins in {store}\n"
    assert state(bin_dir, "list", "--state-dir", str(directory), "--requestor", "REF").stdout == f"no logins for requestor REF in {store}\n"

    # The reset is local: the login Adobe still has for this device is found again by the next setRequestor's
    # re-sync (Protocol/README.md, "Live logins"), and stored again.
    again = StdioDaemon(bin_dir, *daemon_args(emulator.base, directory))
    ready(again)
    assert again.call("checkAuthentication")["status"] == 1
    assert again.stop() == 0
    assert len(state(bin_dir, "list", "--state-dir", str(directory)).stdout.strip().splitlines()) == 2


def test_state_usage_errors_exit_2(bin_dir):
    assert state(bin_dir).returncode == 2
    assert state(bin_dir, "list", "--state-dir").returncode == 2
    assert state(bin_dir, "frobnicate").returncode == 2
    assert state(bin_dir, "list", "--state-dir", "--requestor", "REF").returncode == 2  # an option is no value
    assert state(bin_dir, "list", "--backend", "https://sp.auth.adobe.com").returncode == 2  # for logout only
    assert state(bin_dir, "logout", "--backend", "emulator").returncode == 2
    assert state(bin_dir, "logout", "--backend", "http://example.com").returncode == 2  # plain http off loopback
    # An empty directory (an unset variable in a script) is not the default store: reset must not reach it.
    for action in ("list", "reset", "logout"):
        refused = state(bin_dir, action, "--state-dir", "")
        assert refused.returncode == 2 and "--state-dir needs a path" in refused.stderr
        # An empty requestor matched no login: `reset --requestor ""` deleted nothing and exited 0.
        refused = state(bin_dir, action, "--requestor", "")
        assert refused.returncode == 2 and "--requestor needs a requestor id" in refused.stderr


def test_state_on_a_store_it_cannot_read_says_why_once(bin_dir, tmp_path):
    """A store written by a newer PassBridge: every action exits 1 with the reason on one line, and the store's own
    failure log (the daemon's, Protocol/README.md "The store") does not say it a second time."""
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    database = sqlite3.connect(directory / "passbridge.sqlite")
    database.execute("PRAGMA user_version = 99")
    database.commit()
    database.close()
    (directory / "passbridge.sqlite").chmod(0o600)
    for action in ("list", "reset", "logout"):
        result = state(bin_dir, action, "--state-dir", str(directory))
        assert result.returncode == 1 and result.stdout == "", (action, result.stdout)
        assert result.stderr == (f"passbridge state: {directory}/passbridge.sqlite: the store has schema version 99, newer "
                                 "than this PassBridge knows\n"), \
            (action, result.stderr)


def test_state_on_a_directory_that_does_not_exist_fails(bin_dir, tmp_path):
    """A mistyped --state-dir is not an empty store: every action says so and exits 1, creating nothing; the default
    directory, before anything was stored, holds no logins."""
    missing = tmp_path / "no-such-state"
    for action in ("list", "reset", "logout"):
        result = state(bin_dir, action, "--state-dir", str(missing))
        assert result.returncode == 1 and result.stdout == "", (action, result.stdout)
        assert result.stderr == f"passbridge state: no state directory {missing} (passbridge --help tells the default; " \
            "--state-dir names another)\n", result.stderr
    assert not missing.exists()
    # The default directory not made yet is no mistake: nothing was stored.
    env = {k: v for k, v in os.environ.items() if k != "STATE_DIRECTORY"} | {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    fresh = state(bin_dir, "list", env=env)
    assert (fresh.returncode, fresh.stdout) == (0, f"no logins (no store in {tmp_path / 'xdg/passbridge'})\n"), fresh.stderr
    # An operator who ran it as root or as themselves, looking for a daemon's logins (a breaking pass on a packaged
    # box was told "no logins" by every natural command), is told where those are.
    # No command to copy whole: one without the caller's --requestor/--device would reset every login of the box.
    # A new user's `passbridge-call dev` store is named too (its logins were not found either).
    assert fresh.stderr == ("passbridge state: a daemon with a state directory of its own keeps its logins there: name it "
                            "with --state-dir DIR (passbridge-call dev's: the store it printed; the packaged daemon's: "
                            "sudo -u passbridge passbridge state … --state-dir /var/lib/passbridge)\n"), fresh.stderr
    assert state(bin_dir, "reset", env=env).stdout == "deleted 0 logins\n"
    assert not (tmp_path / "xdg").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    named = state(bin_dir, "list", "--state-dir", str(empty))
    assert (named.stdout, named.stderr) == (f"no logins (no store in {empty})\n", "")


def emulator_requests(emulator) -> list:
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return json.loads(response.read())["requests"]


def logged_in_then_stopped(bin_dir, emulator, directory):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, directory))
    ready(daemon)
    login(daemon)
    assert daemon.stop() == 0


def test_state_logout_ends_the_login_at_adobe_then_here_and_a_later_set_requestor_finds_nothing(bin_dir, emulator, tmp_path):
    directory = tmp_path / "state"
    logged_in_then_stopped(bin_dir, emulator, directory)
    before = len(emulator_requests(emulator))

    ended = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    assert ended.returncode == 0, ended.stdout + ended.stderr
    lines = ended.stdout.splitlines()
    assert lines[0].startswith("ended: REF MockMVPD demo-user-0001 "), ended.stdout
    assert lines[1] == f"ended 1 login at {emulator.base} and deleted it from {directory / 'passbridge.sqlite'}"
    # One REST API V2 logout, with the stored credentials (no registration, no page opened).
    sent = [(r["method"], r["path"]) for r in emulator_requests(emulator)[before:]]
    assert ("GET", "/api/v2/REF/logout/MockMVPD") in sent, sent
    assert all(not path.startswith(("/o/client/register", "/mock-mvpd/")) for _, path in sent), sent
    assert state(bin_dir, "list", "--state-dir", str(directory)).stdout == f"no logins in {directory / 'passbridge.sqlite'}\n"

    # Gone at the emulator too: the next setRequestor's re-sync asks it for the device's profiles and finds none.
    again = StdioDaemon(bin_dir, *daemon_args(emulator.base, directory))
    ready(again)
    assert again.call("checkAuthentication") == {"status": 0, "errorCode": "User Not Authenticated Error"}
    assert again.stop() == 0
    assert state(bin_dir, "list", "--state-dir", str(directory)).stdout.startswith("no logins")


def test_state_logout_without_network_says_what_it_could_not_end_and_keeps_it(bin_dir, emulator, tmp_path):
    directory = tmp_path / "state"
    logged_in_then_stopped(bin_dir, emulator, directory)
    # The backend drops every logout: as unreachable as a box without network.
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "drop"}) == 201
    failed = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    # What was not done goes to stderr (a breaking pass: it was all on stdout, and stderr was empty).
    assert failed.stdout == f"ended no login at {emulator.base}\n"  # it said "ended 0 logins … and deleted them from …"
    lines = failed.stderr.splitlines()
    assert lines[0].startswith("not ended: REF MockMVPD demo-user-0001 ") and \
        lines[0].endswith(f": {emulator.base} could not be reached"), failed.stderr
    assert lines[1].startswith(f"could not end 1 login at {emulator.base}: kept in "), failed.stderr
    # Not "once it can be reached": a breaking pass's backend was reachable and refused the store's credentials.
    assert lines[1].endswith("run passbridge state logout again once the reason given for each, above, is gone "
                             "(passbridge state reset forgets logins here only)"), failed.stderr
    assert len(state(bin_dir, "list", "--state-dir", str(directory)).stdout.strip().splitlines()) == 2, "kept here"

    # Logins of another backend are left alone; once the backend answers again, the same command ends it.
    other = state(bin_dir, "logout", "--backend", "https://sp.auth.adobe.com", "--state-dir", str(directory))
    assert other.returncode == 0 and other.stdout.splitlines()[-1] == \
        f"left 1 login of other backends ({emulator.base}): passbridge state logout --backend URL ends them there", other.stdout
    urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/faults", method="DELETE"), timeout=10).close()
    ended = state(bin_dir, "logout", "--backend", emulator.base + "/", "--state-dir", str(directory), "--requestor", "REF")
    assert ended.returncode == 0 and ended.stdout.startswith("ended: REF MockMVPD "), ended.stdout + ended.stderr
    assert state(bin_dir, "list", "--state-dir", str(directory)).stdout.startswith("no logins")


def test_state_logout_names_a_login_it_ended_but_could_not_delete(bin_dir, emulator, tmp_path):
    """Another process holds the store's write lock: the backend ends the login, the deletion here fails (after the
    5 s busy timeout). The command says so, login by login, and exits 1; run again once the lock is let go, it
    deletes the login (the backend answers that it no longer has it). Before, it printed only the store's error, and
    the login ended at Adobe stayed stored without a word."""
    from test_store import LOCKED, WriteLock
    directory = tmp_path / "state"
    logged_in_then_stopped(bin_dir, emulator, directory)
    lock = WriteLock(directory)
    try:
        held = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    finally:
        lock.release()
    assert held.returncode == 1, held.stdout + held.stderr
    # Only stderr: it also said "ended no login" on stdout, beside "ended 1 login … that … still holds".
    assert held.stdout == ""
    lines = held.stderr.splitlines()
    assert lines[0].startswith("ended but still stored: REF MockMVPD demo-user-0001 ") and \
        lines[0].endswith(LOCKED), held.stderr
    assert lines[1].startswith(f"ended 1 login at {emulator.base} that "), held.stderr
    assert len(state(bin_dir, "list", "--state-dir", str(directory)).stdout.strip().splitlines()) == 2, "still stored"
    again = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    assert again.returncode == 0 and again.stdout.startswith("ended: REF MockMVPD "), again.stdout + again.stderr
    assert state(bin_dir, "list", "--state-dir", str(directory)).stdout.startswith("no logins")


def test_state_logout_counts_a_login_the_backend_no_longer_has_as_ended(bin_dir, emulator, tmp_path):
    """A logout refused with an error whose action is `authentication` (authenticated_profile_missing: logged out
    elsewhere, or expired there) says the login is gone at Adobe: it is deleted here too, not kept forever. Any
    other refusal keeps it (the backend may still have it)."""
    directory = tmp_path / "state"
    logged_in_then_stopped(bin_dir, emulator, directory)
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "error",
                                     "value": "internal_server_error", "count": 1}) == 201
    kept = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    assert kept.returncode == 1 and kept.stderr.startswith("not ended: REF MockMVPD "), kept.stderr
    assert "internal_server_error" in kept.stderr.splitlines()[0]
    assert len(state(bin_dir, "list", "--state-dir", str(directory)).stdout.strip().splitlines()) == 2

    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "error",
                                     "value": "authenticated_profile_missing", "count": 1}) == 201
    ended = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    assert ended.returncode == 0, ended.stdout + ended.stderr
    assert ended.stdout.startswith("ended: REF MockMVPD "), ended.stdout
    assert state(bin_dir, "list", "--state-dir", str(directory)).stdout.startswith("no logins")


def readme_python_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    after = text[text.index("**Python**"):]
    return after[after.index("```python\n") + len("```python\n"):after.index("```\n", after.index("```python\n") + 10)]


def test_the_readme_snippet_run_three_times_leaves_the_production_store_unchanged(bin_dir, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "XDG_STATE_HOME")}
    # The daemon makes its temporary state directory under $TMPDIR: this test's own folder, apart from other suites'.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env.update(HOME=str(home), PATH=f"{bin_dir}:{env['PATH']}", PYTHONPATH=str(ROOT / "Clients" / "python"), TMPDIR=str(temporary))
    production = home / ".local" / "state" / "passbridge"
    # A production store exists (what a daemon on the real backend leaves: its device identity).
    started = subprocess.run([str(bin_dir / "passbridge"), "--stdio"], input="", capture_output=True, text=True, env=env, timeout=30)
    assert started.returncode == 0, started.stderr

    def fingerprint() -> dict:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(production.iterdir())}

    before = fingerprint()
    # While a `--backend emulator` daemon serves, its state directory is there; once its input closes, it is gone.
    with subprocess.Popen([str(bin_dir / "passbridge"), "--stdio", "--backend", "emulator"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True) as serving:
        serving.stdin.write('{"jsonrpc":"2.0","id":1,"method":"getSelectedProvider"}\n')
        serving.stdin.flush()
        assert any('"id":1' in line for line in serving.stdout), "getSelectedProvider answered"
        made = [p.name for p in temporary.iterdir()]
        assert len(made) == 1 and made[0].startswith("passbridge-emulator-"), made
        serving.stdin.close()
        assert serving.wait(timeout=30) == 0
    assert list(temporary.iterdir()) == [], "the temporary state directory is removed"
    for _ in range(3):
        run = subprocess.run([sys.executable, "-c", readme_python_snippet()], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert "'resource': 'ch1'" in run.stdout and "'token'" in run.stdout
    assert fingerprint() == before
    listed = state(bin_dir, "list", env=env)
    assert listed.stdout.startswith("no logins "), listed.stdout
    assert list(temporary.iterdir()) == [], "temporary state directories are removed"


def own_tmpdir(tmp_path):
    """A TMPDIR of the test's own, and the environment that names it with no state directory set: where
    `--backend emulator` makes its temporary state directory."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "XDG_STATE_HOME")}
    env["TMPDIR"] = str(temporary)
    return temporary, env


@contextlib.contextmanager
def emulator_daemon_with_a_registration(bin_dir, tmp_path, *extra, stderr=subprocess.DEVNULL):
    """`passbridge --stdio --backend emulator` (and `extra`) with a TMPDIR of its own, once init and setRequestor
    have stored the registration in its temporary state directory there; yields (the process, that TMPDIR)."""
    temporary, env = own_tmpdir(tmp_path)
    with subprocess.Popen([str(bin_dir / "passbridge"), "--stdio", "--backend", "emulator", *extra], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=stderr, env=env, text=True) as serving:
        for number, (method, params) in enumerate([("init", {}), ("setRequestor", {"requestorID": "REF"})], start=1):
            serving.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}) + "\n")
            serving.stdin.flush()
            assert any(f'"id":{number}' in line for line in serving.stdout), f"{method} answered"
        [made] = list(temporary.iterdir())
        assert (made / "passbridge.sqlite").exists(), "setRequestor stored the registration there"
        yield serving, temporary


def test_at_debug_level_the_temporary_state_directory_is_named_and_state_list_reads_it(bin_dir, tmp_path):
    """`--log-level debug` names the temporary state directory, so that `passbridge state list --state-dir` can be
    pointed at it while the daemon runs; the line says it goes at exit, and it does."""
    with emulator_daemon_with_a_registration(bin_dir, tmp_path, "--log-level", "debug", stderr=subprocess.PIPE) as (serving, temporary):
        [made] = list(temporary.iterdir())
        named = next(line for line in serving.stderr if "temporary state directory" in line)
        assert f" debug passbridge: temporary state directory {made} (removed at exit)" in named, named
        listed = state(bin_dir, "list", "--state-dir", str(made))
        assert listed.returncode == 0 and listed.stdout.startswith("no logins "), listed
        serving.send_signal(signal.SIGTERM)
        serving.stderr.read()
        assert serving.wait(timeout=30) == 0
    assert list(temporary.iterdir()) == [], "the temporary state directory is removed"


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_termination_signal_removes_the_temporary_state_of_backend_emulator(bin_dir, tmp_path, signal_number):
    """A hang-up (the terminal of a hand-run daemon closed) stops it as SIGTERM does: exit 0, the emulator's
    temporary state directory, with the client credentials and tokens it holds, removed."""
    with emulator_daemon_with_a_registration(bin_dir, tmp_path) as (serving, temporary):
        serving.send_signal(signal_number)
        assert serving.wait(timeout=30) == 0
    assert list(temporary.iterdir()) == [], "the temporary state directory is removed"


def test_a_second_signal_removes_the_temporary_state_of_backend_emulator_too(bin_dir, tmp_path):
    """A second SIGTERM while the daemon drains ends it at once (status 1), and the emulator's temporary state
    directory goes first. The drain is held by output nobody reads: answers to rpc.discover fill the pipe, and the
    daemon waits up to --shutdown-timeout (600 s here) to flush them."""
    with emulator_daemon_with_a_registration(bin_dir, tmp_path, "--shutdown-timeout", "600", "--log-level", "info",
                                             stderr=subprocess.PIPE) as (serving, temporary):
        for number in range(100, 140):
            serving.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": "rpc.discover"}) + "\n")
        serving.stdin.flush()
        serving.send_signal(signal.SIGTERM)
        assert any("stopping" in line for line in serving.stderr), "the first signal is taken"
        assert serving.poll() is None, "the daemon drains while its output waits"
        serving.send_signal(signal.SIGTERM)
        assert serving.wait(timeout=30) == 1
        assert "again while stopping" in serving.stderr.read()
    assert list(temporary.iterdir()) == [], "the temporary state directory is removed"


def test_a_signal_while_the_emulator_starts_removes_the_temporary_state_too(bin_dir, tmp_path):
    """A signal before the daemon has finished starting (its emulator child takes a few hundred ms) ends it at once,
    status 0 (Protocol/README.md, "The store"; it used to be taken as a request to drain, and a second signal was
    needed), and the temporary state directory, there as soon as the daemon made it, goes too."""
    temporary, env = own_tmpdir(tmp_path)
    with subprocess.Popen([str(bin_dir / "passbridge"), "--stdio", "--backend", "emulator", "--log-level", "info"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True) as serving:
        deadline = time.monotonic() + 30
        while not list(temporary.iterdir()):
            assert serving.poll() is None and time.monotonic() < deadline, "no temporary state directory appeared"
            time.sleep(0.001)
        serving.send_signal(signal.SIGTERM)
        assert serving.wait(timeout=30) == 0
        assert "signal 15 during start-up: exiting" in serving.stderr.read()
    assert list(temporary.iterdir()) == [], "the temporary state directory is removed"


def test_a_postgresql_store_that_cannot_be_reached_is_named_without_its_secrets(bin_dir):
    """The daemon's and `state list`'s one line for a store they cannot open: the URL without the password, in
    the userinfo or as a parameter (its name percent-encoded or not), nor the TLS key's password."""
    url = "postgresql://fleet:S3CRET-1@127.0.0.1:1/db?%70assword=S3CRET-2&sslpassword=S3CRET-3&connect_timeout=5"
    shown = "postgresql://fleet:***@127.0.0.1:1/db?%70assword=***&sslpassword=***&connect_timeout=5"
    for argv in (["--store", url, "--stdio"], ["state", "list", "--store", url]):
        failed = subprocess.run([str(bin_dir / "passbridge"), *argv], stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=30)
        assert failed.returncode == 1 and failed.stdout == "", failed
        assert f"cannot open {shown}" in failed.stderr, failed.stderr
        assert "S3CRET" not in failed.stderr, failed.stderr


@pytest.mark.parametrize("url", [
    "postgresql://fleet:S3CRET-1@[::1/db",                     # libpq quotes a URI it cannot parse whole
    "postgresql://fleet:S3%43RET-1@[::1/db?password=S3CRET-2",
    "postgresql://fleet:S3CRET-1@local%ZZhost/db",
    "postgresql://fleet:S3CRET@1@127.0.0.1:1/db",              # an @ in the password, not percent-encoded
    "postgresql://127.0.0.1:1/db?sslpassword=S3CRET-3&x=%ZZ",
    "postgresql://127.0.0.1:1/db?password=X#S3CRET-4",        # libpq knows no fragment: the value is X#S3CRET-4
    "postgresql://127.0.0.1:1/S3CRET-5@db",                   # a password with an unencoded /, as libpq cannot read it
    "postgresql://127.0.0.1:1/db?password%3DS3CRET-6",        # an encoded =: libpq refuses the item, quoting it
    # Pieces of a password libpq split and quotes as a port, a database name or a host:
    "postgresql://u:S3CRET-7/efgh@127.0.0.1:1/db",
    "postgresql://u:1/S3CRET%zz8@127.0.0.1:1/db",
    "postgresql://u:abc@S3CRET-9@127.0.0.1:1/db",
    "postgresql://u:S3CRET-10://Yb@127.0.0.1:1/db",
])
def test_libpqs_own_message_does_not_repeat_a_secret(bin_dir, url):
    """A URL the daemon cannot read is shown as `postgresql://…`, but libpq's reason after it quoted the URI whole,
    password included; each secret of the URL (as written and percent-decoded) is now `***` there too."""
    for argv in (["--store", url, "--stdio"], ["state", "list", "--store", url]):
        failed = subprocess.run([str(bin_dir / "passbridge"), *argv], stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=30)
        assert failed.returncode == 1 and failed.stdout == "", failed
        assert "cannot open postgresql://" in failed.stderr and "PostgreSQL connect failed" in failed.stderr, failed.stderr
        assert "S3CRET" not in failed.stderr and "S3%43RET" not in failed.stderr, failed.stderr


@pytest.mark.parametrize("url, piece", [
    # libpq's userinfo runs to the first @ before any /: the password is 98765?S3CRET, which RFC 3986 would read as
    # host u, port 98765; the line named the store postgresql://u:98765?…
    ("postgresql://u:98765?S3CRET@127.0.0.1:1/db", "98765"),
    ("postgresql://u:98765?S3CRET@/db?host=/nonexistent", "98765"),
    # A / in the password: libpq reads 12345 as the port, and named it in its socket's path.
    ("postgresql://u:12345/S3CRET@/db?host=/nonexistent", "12345"),
])
def test_a_password_libpq_reads_differently_from_rfc_3986_is_not_shown_either(bin_dir, url, piece):
    """A password with an unencoded `?` or `/` showed its first piece in the store's name or libpq's reason (a breaking
    pass); each piece is `***` now."""
    for argv in (["--store", url, "--stdio"], ["state", "list", "--store", url]):
        failed = subprocess.run([str(bin_dir / "passbridge"), *argv], stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=30)
        assert failed.returncode == 1 and "cannot open postgresql://u:***@" in failed.stderr, failed.stderr
        assert piece not in failed.stderr and "S3CRET" not in failed.stderr, failed.stderr


def silent_postgresql():
    """A TCP listener that takes connections and never answers, as a hung PostgreSQL server would."""
    import socket
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(60)
    return listener


def children(pid):
    return {int(child) for task in pathlib.Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()}


@pytest.mark.parametrize("backend", [[], ["--backend", "emulator"]])
def test_a_signal_while_the_store_connects_ends_start_up_at_once(bin_dir, backend):
    """Protocol/README.md "The store": a SIGTERM before the daemon serves ends it at once, status 0, where it waited
    for a server that never answers (for ever); the emulator child of --backend emulator goes with it."""
    listener = silent_postgresql()
    environment = {k: v for k, v in os.environ.items() if k != "PGCONNECT_TIMEOUT"}
    daemon = subprocess.Popen([str(bin_dir / "passbridge"), "--stdio", *backend, "--store",
                               f"postgresql://fleet@127.0.0.1:{listener.getsockname()[1]}/db"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
    try:
        connection, _ = listener.accept()  # the daemon is connecting: its start-up waits on this server
        spawned = children(daemon.pid)
        assert len(spawned) == (1 if backend else 0), spawned
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0
        assert daemon.stdout.read() == b""
        assert b"signal 15 during start-up: exiting" in daemon.stderr.read()
        for child in spawned:  # its lifeline closed with the daemon: it sees end of input and exits
            deadline = time.monotonic() + 30
            while pathlib.Path(f"/proc/{child}").exists() and b"Z" not in pathlib.Path(f"/proc/{child}/stat").read_bytes().split(b")")[-1][:3]:
                assert time.monotonic() < deadline, "the emulator child outlived the daemon"
                time.sleep(0.05)
        connection.close()
    finally:
        daemon.kill()
        daemon.wait()
        listener.close()


@pytest.mark.parametrize("how", ["url", "environment"])
def test_a_store_that_never_answers_ends_start_up_after_its_connect_timeout(bin_dir, how):
    """A server that takes the connection and never answers: exit 1 with libpq's reason once the connect timeout
    passes (1 s here, from the URL or PGCONNECT_TIMEOUT, which the daemon's 10 s default does not override)."""
    listener = silent_postgresql()
    url = f"postgresql://fleet@127.0.0.1:{listener.getsockname()[1]}/db"
    environment = {k: v for k, v in os.environ.items() if k != "PGCONNECT_TIMEOUT"}
    if how == "url":
        url += "?connect_timeout=1"
    else:
        environment["PGCONNECT_TIMEOUT"] = "1"
    try:
        failed = subprocess.run([str(bin_dir / "passbridge"), "--stdio", "--store", url], stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=9, env=environment)
        assert (failed.returncode, failed.stdout) == (1, ""), failed
        assert "PostgreSQL connect failed" in failed.stderr and "timeout expired" in failed.stderr, failed.stderr
    finally:
        listener.close()


def test_state_takes_one_device_with_device(bin_dir, emulator, tmp_path, short_tmp):
    """A store holds the logins of every device a daemon acted for (a fleet's `init` `deviceIdentifier`): `--device
    ID` lists, resets or logs out that device's alone (with `--requestor`, that requestor's on it). Before, an
    operator could only reset or log out a whole requestor, every device's logins with it."""
    from rpc_helper import SocketDaemon
    from test_store_fleet import device, login as login_device
    directory = tmp_path / "state"
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, directory))
    try:
        for name in ("box-A", "box-B", "box-C"):
            login_device(device(daemon, name))
    finally:
        assert daemon.stop() == 0
    store = directory / "passbridge.sqlite"

    def devices(*args):
        listed = state(bin_dir, "list", "--state-dir", str(directory), *args)
        assert listed.returncode == 0, listed.stderr
        return [line.split()[4] for line in listed.stdout.strip().splitlines()[1:]]

    assert devices() == ["box-A", "box-B", "box-C"]
    assert devices("--device", "box-B") == ["box-B"]
    assert state(bin_dir, "list", "--state-dir", str(directory), "--device", "box-Z", "--requestor", "REF").stdout == (
        f"no logins for requestor REF on device box-Z in {store}\n")
    assert state(bin_dir, "reset", "--state-dir", str(directory), "--device", "box-A", "--requestor", "OTHER").stdout.startswith(
        "deleted 0 logins")
    assert state(bin_dir, "reset", "--state-dir", str(directory), "--device", "box-A").stdout.startswith("deleted 1 login from")
    assert devices() == ["box-B", "box-C"]
    ended = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory), "--device", "box-C")
    assert ended.returncode == 0 and ended.stdout.splitlines()[0].startswith("ended: REF MockMVPD demo-user-0001 box-C"), ended.stdout
    assert devices() == ["box-B"]
    refused = state(bin_dir, "list", "--state-dir", str(directory), "--device", "")
    assert refused.returncode == 2 and "--device needs a device id" in refused.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to run as nobody")
def test_state_list_and_reset_by_a_user_who_cannot_read_the_store_fail_saying_so(bin_dir, tmp_path):
    """From a breaking pass: the daemon's state directory (mode 0700, its user's) read by another user made `state
    list` say "no logins" and `state reset` "deleted 0 logins", exit 0: an operator believed the logins reset. The
    store there could not be read, and the command now says so, exit 1."""
    base = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o755)
        directory = base / "state"
        directory.mkdir(mode=0o700)
        (directory / "passbridge.sqlite").write_bytes(b"")
        binary = base / "passbridge"  # where nobody may run it, whatever the clone's folder allows
        shutil.copy(bin_dir / "passbridge", binary)
        # The store in a directory nobody may search; the directory itself in one (a second breaking pass: "no state
        # directory").
        (base / "private").mkdir(mode=0o700)
        (base / "private" / "state").mkdir()
        for action, where, unreadable in [("list", directory, f"{directory}/passbridge.sqlite"),
                                          ("reset", directory, f"{directory}/passbridge.sqlite"),
                                          ("list", base / "private" / "state", base / "private" / "state")]:
            run = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(binary), "state",
                                  action, "--state-dir", str(where)], capture_output=True, text=True, timeout=30)
            assert run.returncode == 1 and run.stdout == "", (action, run)
            assert run.stderr == (f"passbridge state: cannot read {unreadable}: Permission denied (run this "
                                  "as the user the daemon runs as, e.g. sudo -u passbridge)\n"), run.stderr
    finally:
        shutil.rmtree(base)


def test_state_list_of_a_file_that_is_no_store_names_the_file(bin_dir, tmp_path):
    """From a breaking pass: "SQLite step failed: file is not a database", with no word of which file."""
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    (directory / "passbridge.sqlite").write_bytes(b"not a database, " * 100)
    run = state(bin_dir, "list", "--state-dir", str(directory))
    assert run.returncode == 1 and run.stdout == "", run
    assert run.stderr.splitlines()[-1] == f"passbridge state: {directory}/passbridge.sqlite: SQLite step failed: file is not a database"


def test_state_logout_names_a_login_it_could_not_end_as_list_shows_it(bin_dir, emulator, tmp_path):
    """A second breaking pass: the logins logout could not end went to stderr through the log's escaping, on top of
    the command's own: a device id `dev\\x` read `dev\\\\x` there and `dev\\x` in `state list`, and could not be copied
    into --device."""
    from rpc_helper import REDIRECT_URL
    directory = tmp_path / "state"
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, directory))
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "dev\\x\u0001"}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login(daemon)
    assert daemon.stop() == 0
    listed = state(bin_dir, "list", "--state-dir", str(directory)).stdout.splitlines()[1]
    assert " dev\\x\\u0001 " in listed, listed
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "drop"}) == 201
    failed = state(bin_dir, "logout", "--backend", emulator.base, "--state-dir", str(directory))
    assert failed.returncode == 1
    assert failed.stderr.splitlines()[0].startswith("not ended: REF MockMVPD demo-user-0001 dev\\x\\u0001: "), failed.stderr


def test_state_list_of_a_state_dir_that_is_a_link_loop_says_so(bin_dir, tmp_path):
    """A second breaking pass: a link loop read as "no state directory", and with a hint about users once that was
    fixed for permissions."""
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    run = state(bin_dir, "list", "--state-dir", str(tmp_path / "loop"))
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"passbridge state: cannot read {tmp_path / 'loop'}: Too many levels of symbolic links\n"
