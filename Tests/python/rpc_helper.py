"""The one harness of the end-to-end suites: the daemon and the emulator as child processes (their stderr always
read, so a chatty log never stalls them), a JSON-RPC 2.0 client (`Client`) and a byte reader for the framing tests
(`ByteReader`), and a urllib "browser" that walks the mock MVPD pages to the redirect URL. Fixtures are in
conftest.py.

`Client` is the shipped client, `passbridge.rpc.Connection` (Clients/python/passbridge/rpc.py): its framing, reader
thread, request ids, response matching, error objects and daemon→host request handlers carry every call of the
suites. What is added here is only for tests: every message kept in order (`received`, `transcript`) with waits
on it (`mark`, `wait_for`, `response`, `notification`, `exchange`), raw lines (`send_raw`), requests sent without
waiting (`send`), daemon→host requests left to the test when no handler is registered, and an abrupt close."""
import html.parser
import json
import os
import pathlib
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Clients" / "python"))

from passbridge import rpc  # noqa: E402  (the shipped client, from this repository)
from passbridge.errors import RPCError, Timeout  # noqa: E402

# Any well-formed three-part JWT is accepted by the emulator as a software statement.
SOFTWARE_STATEMENT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.c2ln"
REDIRECT_URL = "adobepass://ios.app"
NOT_AUTHENTICATED = "User Not Authenticated Error"
NOT_SELECTED = "Provider not Selected Error"
NOT_AUTHORIZED = "User not Authorized Error"


class RpcError(RPCError):
    """The shipped client's RPCError, with the error object as received (`error`)."""

    def __init__(self, error: dict):
        super().__init__(error.get("code", -32603), error.get("message", ""), error.get("data"))
        self.error = error


class _Writer:
    """A byte sink (`pipe.write` + flush, or `socket.sendall`) with the file API `rpc.Connection` writes to."""

    def __init__(self, write):
        self.write = write

    def flush(self):
        pass


class _RecordingFramer(rpc.Framer):
    """The shipped framer, telling its client of each whole message (a batch as one list) as it is cut."""

    def __init__(self, record):
        super().__init__(rpc.NDJSON)
        self._record = record

    def feed(self, data: bytes) -> list:
        messages = super().feed(data)
        for message in messages:
            self._record(message)
        return messages


class Client(rpc.Connection):
    """One JSON-RPC connection (NDJSON) through the shipped `rpc.Connection`. Every message read is kept in
    `received`, every message sent in the order sent; `transcript` interleaves both in the order this client saw
    them. `call` is the shipped client's; a daemon→host request is answered by a handler registered with
    `on_request`, else left in `received` for the test to answer (`send_raw`)."""

    def __init__(self, reader, writer, closer):
        self._client_setup(reader, writer, closer)

    def _client_setup(self, reader, writer, closer):
        self.received: list = []
        self.transcript: list[tuple[str, dict]] = []
        # Status dictionaries whose `errorId` is not their `id` (Protocol/README.md "Values"): every wait fails on one.
        self.status_mismatches: list = []
        self._lock = threading.Condition()
        self._eof = False
        self._closer = closer
        super().__init__(reader, _Writer(writer))
        self._framer = _RecordingFramer(self._record)

    def _record(self, message):
        with self._lock:
            if not _status_ids_agree(message):
                self.status_mismatches.append(message)
            self.received.append(message)
            self.transcript.append(("<--", message))
            self._lock.notify_all()

    def _read_loop(self):
        try:
            super()._read_loop()
        finally:
            with self._lock:
                self._eof = True
                self._lock.notify_all()

    def _handle(self, message):
        if "method" in message and "id" in message and message["method"] not in self._request_handlers:
            return  # left to the test
        super()._handle(message)

    def _send(self, message):
        with self._lock:
            self.transcript.append(("-->", message))
        super()._send(message)

    @staticmethod
    def _error_from(error):
        return RpcError(error if isinstance(error, dict) else {"code": -32603, "message": "malformed error object", "data": error})

    def send_raw(self, text: str):
        with self._write_lock:
            self._writer.write(text.encode() + b"\n")

    def send(self, method: str, params=None, *, notification=False) -> int | None:
        """Sends a request (returns its id) or, with notification=True, a notification, without waiting."""
        request_id = None if notification else next(self._ids)
        self._send(self._request(method, params, request_id))
        return request_id

    def mark(self) -> int:
        """The number of messages received so far (a position for `since`)."""
        with self._lock:
            return len(self.received)

    def wait_for(self, predicate, since: int = 0, timeout: float = 30) -> tuple[int, dict]:
        """Waits for a received message (after position `since`) matching `predicate`; returns (index, message)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                assert not self.status_mismatches, f"a status whose errorId is not its id: {self.status_mismatches[0]}"
                for index in range(since, len(self.received)):
                    if predicate(self.received[index]):
                        return index, self.received[index]
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._eof:
                    raise AssertionError(f"timed out waiting; received since {since}: {self.received[since:]}")
                self._lock.wait(remaining)

    def response(self, request_id: int, since: int = 0, timeout: float = 30) -> tuple[int, dict]:
        return self.wait_for(lambda m: isinstance(m, dict) and m.get("id") == request_id and "method" not in m, since, timeout)

    def notification(self, method: str, since: int = 0, timeout: float = 30) -> tuple[int, dict]:
        return self.wait_for(lambda m: isinstance(m, dict) and m.get("method") == method and "id" not in m, since, timeout)

    def exchange(self, method: str, params=None, timeout: float = 30) -> tuple[list[dict], dict]:
        """Sends a request; returns (notifications received between sending and its response, the response)."""
        start = self.mark()
        request_id = self.send(method, params)
        index, response = self.response(request_id, start, timeout)
        with self._lock:
            between = [m for m in self.received[start:index] if "id" not in m]
        return between, response

    def call(self, method: str, params=None, timeout: float = 30):
        """The shipped client's call: the result, or RpcError for an error response (AssertionError when no answer
        comes within `timeout` seconds)."""
        try:
            result = super().call(method, params, timeout=timeout)
            assert not self.status_mismatches, f"a status whose errorId is not its id: {self.status_mismatches[0]}"
            return result
        except Timeout:
            raise AssertionError(f"{method}: no answer within {timeout} s; received: {self.received[-5:]}") from None

    def close(self):
        """Closes the connection at once (stdin closed, or the socket shut down both ways), as a host that quits."""
        self._closer()


def _status_ids_agree(message) -> bool:
    """Every status dictionary of `message` — a `status` notification's params, each entry of a result's
    `statuses` — carries `errorId` equal to its `id`."""
    if not isinstance(message, dict):
        return True
    found = []
    if message.get("method") == "status" and isinstance(message.get("params"), dict):
        found.append(message["params"])
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("statuses"), list):
        found += [s for s in result["statuses"] if isinstance(s, dict)]
    return all(s.get("errorId") == s.get("id") for s in found)


def notifications_named(messages: list[dict]) -> list[str]:
    return [m["method"] for m in messages if "method" in m and "id" not in m]


# --------------------------------------------------------------------------------------------- processes

class Emulator:
    """pass-emulator on a free loopback port."""

    def __init__(self, bin_dir: pathlib.Path):
        self.binary = str(pathlib.Path(bin_dir) / "pass-emulator")
        self.process = subprocess.Popen([self.binary, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.base = self.process.stdout.readline().strip()
        assert self.base.startswith("http://127.0.0.1:"), self.base

    def verify_token(self, token: str, resource: str) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, "verify-token", token, "--resource", resource, "--url", self.base],
                              capture_output=True, text=True, timeout=30)

    def admin(self, path: str, payload: dict):
        request = urllib.request.Request(self.base + "/__admin/" + path, data=json.dumps(payload).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.process.stdout.close()


def daemon_args(backend: str, state_dir, *extra) -> list[str]:
    return ["--backend", backend, "--state-dir", str(state_dir), "--software-statement", SOFTWARE_STATEMENT, *extra]


def thread_names(pid: int) -> list[str]:
    """The names of process `pid`'s threads (/proc/PID/task/TID/comm), sorted. The daemon's are all `passbridge…`
    (libcurl's resolver threads take their creator's name); libdispatch names the workers of Swift's global pool after
    their queues (`r-initiated-qos`, `-qos.overcommit`)."""
    return sorted((task / "comm").read_text().strip() for task in pathlib.Path(f"/proc/{pid}/task").iterdir())


def executable(where, name: str = "passbridge") -> str:
    """`where` itself when it is a file, else `name` inside the folder `where`."""
    path = pathlib.Path(where)
    return str(path / name if path.is_dir() else path)


class ChildProcess:
    """A child process whose stderr a thread reads into memory as it comes (`log`, `wait_for_log`); with
    `drain_stderr=False` stderr is left unread in `process.stderr` (for the test of a log nobody reads)."""

    def _start(self, argv: list[str], stdin, stdout, drain_stderr: bool = True, **popen):
        self.process = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, **popen)
        self._log = bytearray()
        self._log_changed = threading.Condition()
        self._drain = None
        if drain_stderr:
            self._drain = threading.Thread(target=self._read_stderr, daemon=True)
            self._drain.start()

    def _read_stderr(self):
        stream = self.process.stderr
        while True:
            chunk = stream.read1(65536)
            with self._log_changed:
                if not chunk:
                    self._log_changed.notify_all()
                    return
                self._log += chunk
                self._log_changed.notify_all()

    def log(self) -> str:
        """Everything written to stderr so far (all of it once the process has exited)."""
        if self.process.poll() is not None and self._drain:
            self._drain.join(5)
        with self._log_changed:
            return self._log.decode("utf-8", "replace")

    def wait_for_log(self, text: str, timeout: float = 10) -> str:
        """Waits until stderr contains `text`; returns the log so far."""
        deadline = time.monotonic() + timeout
        with self._log_changed:
            while text.encode() not in self._log:
                remaining = deadline - time.monotonic()
                assert remaining > 0 and self._drain.is_alive(), f"no {text!r} in the log: {self._log.decode('utf-8', 'replace')}"
                self._log_changed.wait(remaining)
            return self._log.decode("utf-8", "replace")

    def _close_pipes(self):
        for stream in (self.process.stdin, self.process.stdout):
            if stream:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass
        if self._drain:
            self._drain.join(5)
        self.process.stderr.close()


class StdioDaemon(ChildProcess, Client):
    """`passbridge --stdio …` as a child. By default this `Client` is its only connection. With `raw=True` no
    message is read for you: `write` and `roundtrip` send bytes, `reader` (a `ByteReader`) hands out what came back,
    for the tests of framing and of the bytes themselves. `where` is the binary or the folder holding it."""

    def __init__(self, where, *args: str, raw: bool = False, drain_stderr: bool = True):
        self._start([executable(where), "--stdio", *args], subprocess.PIPE, subprocess.PIPE, drain_stderr)
        self.reader = None
        if raw:
            self.reader = ByteReader(self.process.stdout.fileno())
            return

        def write(data: bytes):
            self.process.stdin.write(data)
            self.process.stdin.flush()

        self._client_setup(self.process.stdout, write, self.process.stdin.close)

    def write(self, data):
        """Raw mode: sends bytes (or a str, UTF-8 encoded) as they are."""
        self.process.stdin.write(data.encode() if isinstance(data, str) else data)
        self.process.stdin.flush()

    def roundtrip(self, text: str, timeout: float = 5.0) -> bytes:
        """Raw mode: sends one NDJSON line and returns the next line received."""
        self.write(text + "\n")
        return self.reader.line(timeout)

    def close_input(self):
        self.process.stdin.close()

    def stop(self) -> int:
        """Closes stdin (end of input) and waits for the exit status."""
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.process.wait(timeout=20)
        finally:
            self._close_pipes()

    def finish(self, timeout: float = 10.0) -> tuple[int, bytes, bytes]:
        """Raw mode: closes stdin and returns (exit status, stdout not yet read, stderr)."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        code = self.process.wait(timeout)
        rest = self.reader.buffer + self.process.stdout.read()
        log = self.log().encode()
        self._close_pipes()
        return code, rest, log


def wait_for_socket(path, process: subprocess.Popen, timeout: float = 20.0):
    """Waits until something accepts on the Unix socket `path`; fails if `process` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the daemon exited early with {process.returncode}"
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
                return
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.01)
    raise TimeoutError(f"no socket at {path}")


class SocketDaemon(ChildProcess):
    """`passbridge --socket PATH …` as a child, accepting once started: `connect()` opens a raw socket,
    `client()` a `Client`. `where` is the binary or the folder holding it."""

    def __init__(self, where, path, *args: str):
        self.path = str(path)
        self._start([executable(where), "--socket", self.path, *args], subprocess.DEVNULL, subprocess.DEVNULL)
        try:
            wait_for_socket(self.path, self.process)
        except AssertionError as error:
            self.process.wait(5)
            raise AssertionError(f"{error}: {self.log()}") from None

    def connect(self, timeout: float = 10.0) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(self.path)
        return sock

    def client(self) -> Client:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(self.path)
        reader = sock.makefile("rb")

        def close():
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

        return Client(reader, sock.sendall, close)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, then the exit status (killed, and the test failed, if it takes longer than `timeout`)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        finally:
            if self.process.poll() is not None:
                self._close_pipes()


# --------------------------------------------------------------------------------------------- raw bytes

class ByteReader:
    """Buffers bytes from a file descriptor and hands out lines or Content-Length bodies."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = b""

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no data in time")
        ready, _, _ = select.select([self.fd], [], [], remaining)
        if not ready:
            raise TimeoutError("no data in time")
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise EOFError("peer closed")
        self.buffer += chunk

    def line(self, timeout=5.0) -> bytes:
        """The next line, without its newline."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            self._fill(deadline)
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def frame(self, timeout=5.0) -> bytes:
        """The next Content-Length body."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            self._fill(deadline)
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: "), header
        length = int(header.split(b": ")[1])
        while len(rest) < length:
            self.buffer = header + b"\r\n\r\n" + rest
            self._fill(deadline)
            header, _, rest = self.buffer.partition(b"\r\n\r\n")
        self.buffer = rest[length:]
        return rest[:length]

    def json(self, timeout=5.0):
        return json.loads(self.line(timeout))

    def closed(self, timeout=5.0) -> bool:
        """True when the peer closes with nothing more sent."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._fill(deadline)
                if self.buffer.strip():
                    return False
        except EOFError:
            return True


def request(method, params=None, id=1) -> str:
    """The NDJSON text of one request."""
    message = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


# --------------------------------------------------------------------------------------------- the browser

class _Forms(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action") or "", "method": (attrs.get("method") or "get").upper(), "fields": {}})
        elif tag in ("input", "select") and self.forms and attrs.get("name"):
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value") or ""


class _StopAtAppRedirect(urllib.request.HTTPRedirectHandler):
    """Follows http(s) redirects; a redirect to another scheme (the app's redirect URL) ends the walk."""

    def http_error_302(self, req, fp, code, msg, headers):
        location = headers.get("Location", "")
        target = urllib.parse.urljoin(req.full_url, location)
        if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
            raise AppRedirect(target)
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_302


class AppRedirect(Exception):
    def __init__(self, url: str):
        super().__init__(url)
        self.url = url


def follow_to_redirect_url(url: str, username: str = "demo", password: str = "demo", max_pages: int = 10,
                           extra_fields: dict | None = None, stop_at_page_without_form: bool = False) -> str:
    """Walks a login (or logout) page like a web view: follows redirects, fills and submits each form with
    `username`/`password` (and `extra_fields`, for fields the page has), until the page redirects to a non-http URL, which it returns. With
    `stop_at_page_without_form`, a final page with no form (the second screen's "done" page) ends the walk and
    its URL is returned."""
    opener = urllib.request.build_opener(_StopAtAppRedirect())
    method, data = "GET", None
    for _ in range(max_pages):
        try:
            request = urllib.request.Request(url, data=data, method=method)
            with opener.open(request, timeout=15) as response:
                page_url = response.geturl()
                page = response.read().decode("utf-8", "replace")
        except AppRedirect as redirect:
            return redirect.url
        parser = _Forms()
        parser.feed(page)
        if not parser.forms and stop_at_page_without_form:
            return page_url
        assert parser.forms, f"no form and no redirect at {page_url}: {page[:300]}"
        form = parser.forms[0]
        fields = dict(form["fields"])
        if "username" in fields:
            fields.update(username=username, password=password)
        fields.update({key: value for key, value in (extra_fields or {}).items() if key in fields})
        url = urllib.parse.urljoin(page_url, form["action"] or page_url)
        encoded = urllib.parse.urlencode(fields)
        if form["method"] == "POST":
            method, data = "POST", encoded.encode()
        else:
            method, data = "GET", None
            url = url.split("?")[0] + "?" + encoded
    raise AssertionError("the pages never reached the redirect URL")


# --------------------------------------------------------------------------------------------- the document

def _schema(schema: dict, document: dict) -> dict:
    """A schema whose `#/components/...` references resolve inside `document`."""
    return dict(schema, components=document["components"])


def check_against_openrpc(transcript: list[tuple[str, dict]], document: dict) -> int:
    """Validates what the daemon sent in `transcript` against the OpenRPC document: each notification's params
    against that notification's entry, each result against the result schema of the method it answers.
    Returns the number of messages checked."""
    import jsonschema

    methods = {m["name"]: m for m in document["methods"]}
    asked = {m["id"]: m["method"] for arrow, m in transcript if arrow == "-->" and "id" in m and "method" in m}
    checked = 0
    for arrow, message in transcript:
        if arrow != "<--":
            continue
        if "method" in message and "id" not in message:
            entry = methods[message["method"]]
            assert entry.get("x-direction") == "daemon-to-host" and entry.get("x-notification") is True, message
            params = entry["params"]
            schema = {"type": "object", "properties": {p["name"]: p["schema"] for p in params},
                      "required": [p["name"] for p in params if p.get("required")]}
            jsonschema.Draft7Validator(_schema(schema, document)).validate(message.get("params", {}))
            checked += 1
        elif "result" in message and message.get("id") in asked:
            entry = methods[asked[message["id"]]]
            jsonschema.Draft7Validator(_schema(entry["result"]["schema"], document)).validate(message["result"])
            checked += 1
    return checked


def web_login(client, mvpd: str = "MockMVPD"):
    """A web-view login through the emulator's page: getAuthentication, `mvpd` at the dialog, the page walked to
    the redirect URL, handleExternalURL; both calls end with status 1."""
    start = client.mark()
    get = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, _ = client.exchange("setSelectedProvider", {"mvpdId": mvpd})
    url = next(n["params"]["url"] for n in notes if n["method"] == "navigateToUrl")
    assert client.call("handleExternalURL", {"url": follow_to_redirect_url(url)})["status"] == 1
    assert client.response(get, start)[1]["result"]["status"] == 1


def pipes_or_socket(request, bin_dir, emulator, tmp_path, *test_flags: str):
    """For a fixture with `params=["pipes", "socket"]`: a connection to a daemon against `emulator`, over real pipes
    (a daemon of its own) or a real Unix socket (the `daemon` fixture's), and the check that ends it (True when the
    daemon or the connection ended cleanly). With `test_flags` (`--test-poll-seconds 0.25`, say) both are
    passbridge-test-daemon's, given those flags."""
    where = executable(bin_dir, "passbridge-test-daemon") if test_flags else bin_dir
    if request.param == "pipes":
        connection = StdioDaemon(where, *daemon_args(emulator.base, tmp_path / "state"), *test_flags)
        return connection, lambda: connection.stop() == 0
    if test_flags:
        daemon = SocketDaemon(where, request.getfixturevalue("short_tmp") / "pb.sock",
                              *daemon_args(emulator.base, tmp_path / "state"), *test_flags)
        connection = daemon.client()
        return connection, lambda: connection.close() or daemon.stop() == 0
    connection = request.getfixturevalue("daemon").client()
    return connection, lambda: connection.close() or True
