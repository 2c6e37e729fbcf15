"""Exact JSON errors of the real `passbridge`, over a pipe and over the Unix socket (Protocol/README.md "What counts
as JSON"): a raw NUL byte is a parse error (-32700), a repeated member name or U+0000 in a member name is valid JSON
the daemon refuses (-32600, data.reason naming the member) unless the rest of the text is not JSON. Each text goes
as one Content-Length frame, then a probe request that must still be answered."""
import json

import pytest

from rpc_helper import ByteReader, SocketDaemon, StdioDaemon

REFUSED = "(valid JSON that this parser refuses)"

CASES = [
    pytest.param(b"123\x00", -32700, "raw NUL byte (0x00), which is never valid in JSON text", id="123-then-raw-NUL"),
    pytest.param(b'{"a":"b","a":"c"}', -32600, f'duplicate member name "a" {REFUSED}', id="duplicate-other-value"),
    pytest.param(b'{"a":"b","a":"b"}', -32600, f'duplicate member name "a" {REFUSED}', id="duplicate-same-value"),
    pytest.param(b'{"foo\\u0000bar": 42}', -32600, f'member name "foo\\u0000bar" holds U+0000 {REFUSED}',
                 id="escaped-NUL-in-a-name"),
    pytest.param(b'{"a":1,"a":2, garbage', -32700, None, id="duplicate-then-garbage"),
    # The reason names the mark, which quoted would be invisible.
    pytest.param(b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"rpc.stats","id":1}', -32700,
                 "UTF-8 byte order mark (EF BB BF, U+FEFF) in front of the JSON text", id="byte-order-mark"),
    # Elsewhere jansson's reason names it, as U+FEFF rather than the invisible character itself.
    pytest.param(b'{"jsonrpc":"2.0","method":"rpc.stats","id":1}\xef\xbb\xbf', -32700,
                 "end of file expected near 'U+FEFF'", id="trailing-byte-order-mark"),
    # A batch holding a refused object is refused whole: its valid request is not run.
    pytest.param(b'[{"jsonrpc":"2.0","method":"rpc.stats","id":"lost"},{"jsonrpc":"2.0","method":"rpc.stats","id":1,"id":2}]',
                 -32600, f'duplicate member name "id" {REFUSED}', id="batch-with-a-duplicate"),
]

PROBE = b'{"jsonrpc":"2.0","method":"rpc.stats","id":"probe"}'


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def check_answers(reader: ByteReader, code: int, reason: str | None):
    answer = json.loads(reader.frame())
    assert answer["id"] is None and answer["error"]["code"] == code, answer
    if reason is not None:
        assert answer["error"]["data"]["reason"] == reason
    if code == -32700:
        assert isinstance(answer["error"]["data"]["offset"], int)
    else:
        assert set(answer["error"]["data"]) == {"reason"}
    probe = json.loads(reader.frame())
    assert probe["id"] == "probe" and "result" in probe, probe


@pytest.mark.parametrize("text, code, reason", CASES)
def test_over_a_pipe(passbridge, tmp_path, text, code, reason):
    daemon = StdioDaemon(passbridge, "--state-dir", str(tmp_path / "state"), raw=True)
    try:
        daemon.write(framed(text) + framed(PROBE))
        check_answers(daemon.reader, code, reason)
    finally:
        status, rest, _ = daemon.finish()
    assert status == 0 and rest == b""


@pytest.mark.parametrize("text, code, reason", CASES)
def test_over_the_unix_socket(passbridge, short_tmp, tmp_path, text, code, reason):
    daemon = SocketDaemon(passbridge, short_tmp / "pb.sock", "--state-dir", str(tmp_path / "state"))
    try:
        sock = daemon.connect()
        sock.sendall(framed(text) + framed(PROBE))
        check_answers(ByteReader(sock.fileno()), code, reason)
        sock.close()
    finally:
        assert daemon.stop() == 0


def test_raw_nul_offset_is_that_of_the_byte(passbridge, tmp_path):
    daemon = StdioDaemon(passbridge, "--state-dir", str(tmp_path / "state"), raw=True)
    try:
        daemon.write(framed(b'{"jsonrpc":"2.0",\x00"id":1}'))
        assert json.loads(daemon.reader.frame())["error"]["data"] == {
            "reason": "raw NUL byte (0x00), which is never valid in JSON text", "offset": 17}
    finally:
        assert daemon.finish()[0] == 0


def test_a_parse_error_offset_lies_just_past_the_token_it_names(passbridge, tmp_path):
    """Protocol/README.md "Errors" (-32700): `offset` counts the bytes read when the parser stopped, past the token
    the reason quotes; at the end of the text for "end of file"."""
    daemon = StdioDaemon(passbridge, "--state-dir", str(tmp_path / "state"), raw=True)
    try:
        for text, reason, offset in [(b'{"a":tru}', "invalid token near 'tru'", 8),
                                     (b'{"a":1,,"b":2}', "string or '}' expected near ','", 8),
                                     (b'[1,2', "']' expected near end of file", 4)]:
            daemon.write(framed(text))
            assert json.loads(daemon.reader.frame())["error"]["data"] == {"reason": reason, "offset": offset}
    finally:
        assert daemon.finish()[0] == 0
