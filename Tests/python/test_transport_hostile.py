"""The transport under hostile and broken peers, with the real daemon over real pipes and sockets: work linear in
the bytes, output bounded per peer, framing that resynchronizes, logging that never blocks, the relay under
back-pressure, socket access and running out of file descriptors."""
import json
import time

from rpc_helper import StdioDaemon


def timed_get_metadata(daemon, count):
    """Seconds to answer one getMetadata whose params carry `count` doubles (echoed back as `arguments`)."""
    junk = [0.5 + index / 7 for index in range(count)]
    started = time.monotonic()
    result = daemon.call("getMetadata", {"opCode": 2, "junk": junk}, timeout=120)
    elapsed = time.monotonic() - started
    assert result["arguments"]["junk"] == junk
    return elapsed


def test_echoing_doubles_takes_time_proportional_to_their_count(bin_dir, tmp_path):
    daemon = StdioDaemon(bin_dir, "--backend", "emulator", "--state-dir", str(tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    timed_get_metadata(daemon, 1000)  # warm-up
    small = min(timed_get_metadata(daemon, 4_000) for _ in range(3))
    large = min(timed_get_metadata(daemon, 40_000) for _ in range(2))
    assert large / small <= 15, f"4,000 doubles {small:.3f} s, 40,000 doubles {large:.3f} s"
    assert daemon.stop() == 0
