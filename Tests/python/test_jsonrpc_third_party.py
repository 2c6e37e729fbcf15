"""python-lsp-jsonrpc (PyPI, a third-party JSON-RPC endpoint) talks to the daemon in both framings,
over stdio and over the socket: requests, errors, daemon notifications and daemon→host requests."""
import json
import socket
import subprocess
import threading

import pytest
from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.exceptions import JsonRpcException, JsonRpcMethodNotFound
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter


class NDJSONWriter:
    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()

    def write(self, message):
        with self.lock:
            self.stream.write(json.dumps(message).encode() + b"\n")
            self.stream.flush()


def listen_ndjson(stream, consume):
    for line in stream:
        if line.strip():
            consume(json.loads(line))


def open_streams(transport, test_daemon, socket_daemon):
    """(input stream from the daemon, output stream to it, cleanup)."""
    if transport == "stdio":
        proc = subprocess.Popen([test_daemon], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        def cleanup():
            proc.stdin.close()
            assert proc.wait(10) == 0
            proc.stdout.close()
        return proc.stdout, proc.stdin, cleanup
    sock = socket_daemon().connect()
    sock.settimeout(None)
    rfile, wfile = sock.makefile("rb"), sock.makefile("wb")

    def cleanup():
        sock.shutdown(socket.SHUT_RDWR)
        wfile.close()
        rfile.close()
        sock.close()
    return rfile, wfile, cleanup


@pytest.mark.parametrize("transport", ["stdio", "socket"])
@pytest.mark.parametrize("framing", ["content-length", "ndjson"])
def test_python_lsp_jsonrpc_endpoint(transport, framing, test_daemon, socket_daemon):
    incoming, outgoing, cleanup = open_streams(transport, test_daemon, socket_daemon)
    events = []
    got_events = threading.Event()

    def on_event(params):
        events.append(params["n"])
        if len(events) == 3:
            got_events.set()

    dispatcher = {
        "test/event": on_event,
        "partnerSSO/checkAccessStatus": lambda params: {"accessStatus": "granted" if params == {"prompt": True} else "denied"},
    }
    if framing == "content-length":
        writer = JsonRpcStreamWriter(outgoing)
        endpoint = Endpoint(dispatcher, writer.write)
        reader = JsonRpcStreamReader(incoming)
        listener = threading.Thread(target=reader.listen, args=(endpoint.consume,), daemon=True)
    else:
        writer = NDJSONWriter(outgoing)
        endpoint = Endpoint(dispatcher, writer.write)
        listener = threading.Thread(target=listen_ndjson, args=(incoming, endpoint.consume), daemon=True)
    listener.start()
    try:
        assert endpoint.request("subtract", [42, 23]).result(timeout=5) == 19
        assert endpoint.request("subtract", {"minuend": 42, "subtrahend": 23}).result(timeout=5) == 19
        assert endpoint.request("get_data").result(timeout=5) == ["hello", 5]
        with pytest.raises(JsonRpcMethodNotFound):
            endpoint.request("foobar", {}).result(timeout=5)
        with pytest.raises(JsonRpcException) as invalid:
            endpoint.request("subtract", ["a", "b"]).result(timeout=5)
        assert invalid.value.code == -32602
        assert endpoint.request("test/notify", {"count": 3}).result(timeout=5) == {"sent": 3}
        assert got_events.wait(5) and events == [0, 1, 2]
        answer = endpoint.request("test/callHost", {"method": "partnerSSO/checkAccessStatus", "params": {"prompt": True}}).result(timeout=5)
        assert answer == {"result": {"accessStatus": "granted"}}
        assert endpoint.request("rpc.discover").result(timeout=5)["openrpc"].startswith("1.")
        endpoint.notify("notify_hello", [7])
        assert endpoint.request("echo", ["é✓"]).result(timeout=5) == ["é✓"]
    finally:
        endpoint.shutdown()
        cleanup()
