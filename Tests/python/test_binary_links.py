"""What the daemon links and maps: no Foundation beyond FoundationEssentials (neither Foundation,
FoundationNetworking, FoundationInternationalization nor ICU), and libcurl, libcrypto and libpq only when used — libcurl and libcrypto
from the first requestor on, libpq only with a PostgreSQL store (readelf on the built binary, /proc/PID/maps of the
running daemon)."""
import subprocess

from rpc_helper import StdioDaemon, daemon_args, executable
from test_bridge_flows import login, ready


def needed_libraries(path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return sorted(line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line)


def mapped(pid: int, prefix: str) -> bool:
    with open(f"/proc/{pid}/maps") as maps:
        return any(line.rstrip().rsplit("/", 1)[-1].startswith(prefix) for line in maps)


def test_passbridge_needs_only_foundation_essentials(bin_dir):
    needed = needed_libraries(executable(bin_dir))
    forbidden = [name for name in needed if name.startswith(("libFoundation.", "libFoundationNetworking", "libFoundationInternationalization"))
                 or "ICU" in name or name.startswith("libicu")]
    assert forbidden == [], needed
    # Loaded when used (dlopen), so neither is a start-up dependency.
    assert [name for name in needed if name.startswith(("libcurl", "libcrypto", "libpq"))] == [], needed


def test_libcurl_and_libcrypto_are_mapped_by_the_first_requestor_and_libpq_never_with_sqlite(bin_dir, emulator, tmp_path):  # noqa: F811
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        assert daemon.call("rpc.discover", {})["openrpc"]
        pid = daemon.process.pid
        assert [name for name in ("libcurl.so", "libcrypto.so", "libpq.so") if mapped(pid, name)] == []
        ready(daemon)
        login(daemon)
        assert daemon.call("getAuthorization", {"resource": "ch1"})["token"]
        assert mapped(pid, "libcurl.so") and mapped(pid, "libcrypto.so")
        assert not mapped(pid, "libpq.so")
    finally:
        assert daemon.stop() == 0
