"""Raw-byte helpers for the JSON-RPC end-to-end tests: read lines or Content-Length frames with timeouts."""
import json
import os
import select
import subprocess
import time


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


class StdioDaemon:
    """`passbridge --stdio` over real pipes."""

    def __init__(self, binary, *args):
        self.proc = subprocess.Popen([binary, "--stdio", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.reader = ByteReader(self.proc.stdout.fileno())

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def call(self, text, timeout=5.0) -> bytes:
        """Sends one NDJSON line and returns the next line received."""
        self.send(text + "\n")
        return self.reader.line(timeout)

    def close_input(self):
        self.proc.stdin.close()

    def finish(self, timeout=10.0):
        """Closes stdin and returns (exit code, remaining stdout, stderr)."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout)
        rest = self.reader.buffer + self.proc.stdout.read()
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, rest, err


def request(method, params=None, id=1):
    message = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        message["params"] = params
    return json.dumps(message)
