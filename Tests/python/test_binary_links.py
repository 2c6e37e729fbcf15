"""The daemon links no Foundation beyond FoundationEssentials: neither Foundation, FoundationNetworking,
FoundationInternationalization nor ICU (readelf on the built binary)."""
import subprocess

from rpc_helper import executable


def test_passbridge_needs_only_foundation_essentials(bin_dir):
    dynamic = subprocess.run(["readelf", "-d", executable(bin_dir)], capture_output=True, text=True, check=True).stdout
    needed = sorted(line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line)
    assert "libcurl.so.4" in needed
    forbidden = [name for name in needed if name.startswith(("libFoundation.", "libFoundationNetworking", "libFoundationInternationalization"))
                 or "ICU" in name or name.startswith("libicu")]
    assert forbidden == [], needed
