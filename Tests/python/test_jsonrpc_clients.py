"""The thin clients against the real daemon: Clients/shell/passbridge-call and Clients/python/passbridge/rpc.py."""
import asyncio
import json
import os
import pathlib
import subprocess
import sys
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))

from passbridge.rpc import AsyncConnection, Connection, RPCError  # noqa: E402

CALL = str(ROOT / "Clients" / "shell" / "passbridge-call")


def run_call(binary, *args, stdin=None):
    """passbridge-call spawning `binary` (the daemon, or the test daemon for the test methods)."""
    env = dict(os.environ, PASSBRIDGE=binary, PASSBRIDGE_ARGS="")
    return subprocess.run([CALL, *args], input=stdin, capture_output=True, text=True, timeout=30, env=env)


def test_shell_call_over_stdio(passbridge, test_daemon):
    ok = run_call(test_daemon, "subtract", "[42, 23]")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "19\n", "")
    discover = run_call(passbridge, "rpc.discover")
    assert discover.returncode == 0 and json.loads(discover.stdout)["openrpc"].startswith("1.")
    failed = run_call(test_daemon, "nope", "{}")
    assert failed.returncode == 1 and failed.stdout == ""
    assert json.loads(failed.stderr)["code"] == -32601
    big = run_call(test_daemon, "echo", '{"id":18446744073709551617,"s":"é\\"q"}')
    assert big.stdout == '{"id":18446744073709551617,"s":"é\\"q"}\n'


def test_shell_call_usage_and_connection_errors(passbridge, short_tmp):
    assert run_call(passbridge).returncode == 2
    assert run_call(passbridge, "--bogus", "x").returncode == 2
    assert run_call(passbridge, "--requestor").returncode == 2
    missing = run_call(passbridge, "--socket", str(short_tmp / "none.sock"), "echo")
    assert missing.returncode == 2 and "cannot connect" in missing.stderr


def test_shell_call_over_socket_and_session(passbridge, socket_daemon):
    daemon = socket_daemon()
    ok = run_call(passbridge, "--socket", daemon.path, "sum", "[1,2,4]")
    assert (ok.returncode, ok.stdout) == (0, "7\n")
    script = 'subtract [42,23]\n\n# a comment\ntest/notify {"count":2}\ntest/callHost {"method":"ask"}\nnope\n'
    session = run_call(passbridge, "--socket", daemon.path, "--session", stdin=script)
    assert session.returncode == 1
    responses = [json.loads(line) for line in session.stdout.splitlines()]
    assert [r["id"] for r in responses] == [1, 2, 3, 4]
    assert responses[0]["result"] == 19 and responses[1]["result"] == {"sent": 2}
    assert responses[2]["result"]["error"]["code"] == -32601  # the script refuses daemon requests
    assert responses[3]["error"]["code"] == -32601
    notifications = [json.loads(line) for line in session.stderr.splitlines()]
    assert [n["params"]["n"] for n in notifications] == [0, 1]


@pytest.mark.parametrize("framing", ["ndjson", "content-length"])
def test_python_rpc_sync_over_stdio(framing, test_daemon):
    events = []
    done = threading.Event()
    conn = Connection.spawn([test_daemon, "--stdio"], framing=framing)
    conn.on_notification("test/event", lambda params: (events.append(params["n"]), len(events) == 3 and done.set()))
    conn.on_request("partnerSSO/checkAccessStatus", lambda params: {"accessStatus": "granted"})
    assert conn.call("subtract", [42, 23], timeout=5) == 19
    assert conn.call("echo", {"id": 18446744073709551617}, timeout=5) == {"id": 18446744073709551617}
    with pytest.raises(RPCError) as error:
        conn.call("nope", timeout=5)
    assert error.value.code == -32601
    assert conn.call("test/notify", {"count": 3}, timeout=5) == {"sent": 3}
    assert done.wait(5) and events == [0, 1, 2]
    assert conn.call("test/callHost", {"method": "partnerSSO/checkAccessStatus"}, timeout=5) == {"result": {"accessStatus": "granted"}}
    unanswered = conn.call("test/callHost", {"method": "unknown/thing"}, timeout=5)
    assert unanswered["error"]["code"] == -32601
    futures = [conn.call_future("sum", [i, i]) for i in range(64)]
    assert [f.result(5) for f in futures] == [2 * i for i in range(64)]
    assert conn.close() == 0


def test_python_rpc_sync_over_socket(socket_daemon):
    daemon = socket_daemon()
    with Connection.connect(daemon.path) as conn:
        assert conn.call("get_data", timeout=5) == ["hello", 5]
        def refuse(params):
            raise RPCError(1, "cancelled", {"reason": "userCancelled"})
        conn.on_request("partnerSSO/requestAccountMetadata", refuse)
        answer = conn.call("test/callHost", {"method": "partnerSSO/requestAccountMetadata"}, timeout=5)
        assert answer["error"]["data"] == {"reason": "userCancelled"}


def test_python_rpc_async_over_stdio_and_socket(socket_daemon, test_daemon):
    daemon = socket_daemon()

    async def scenario():
        events = []
        conn = await AsyncConnection.spawn([test_daemon, "--stdio"], framing="content-length")
        conn.on_notification(None, lambda method, params: events.append((method, params["n"])))

        async def grant(params):
            await asyncio.sleep(0.01)
            return {"accessStatus": "granted", "prompt": params["prompt"]}
        conn.on_request("partnerSSO/checkAccessStatus", grant)
        assert await conn.call("subtract", {"minuend": 42, "subtrahend": 23}) == 19
        assert await conn.call("test/notify", {"count": 2}) == {"sent": 2}
        assert events == [("test/event", 0), ("test/event", 1)]
        host = await conn.call("test/callHost", {"method": "partnerSSO/checkAccessStatus", "params": {"prompt": True}})
        assert host == {"result": {"accessStatus": "granted", "prompt": True}}
        results = await asyncio.gather(*(conn.call("sum", [i, 1]) for i in range(64)))
        assert results == [i + 1 for i in range(64)]
        with pytest.raises(RPCError):
            await conn.call("nope")
        assert await conn.close() == 0

        sock = await AsyncConnection.connect(daemon.path)
        assert await sock.call("echo", ["é"]) == ["é"]
        await sock.notify("notify_hello", [7])
        assert await sock.call("sum", [1, 2]) == 3
        await sock.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))
