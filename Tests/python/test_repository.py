"""The repository stands alone: Tests/check-citations.sh (run by Tests/run-all.sh) fails on a citation of a
document the repository does not contain, and passes on the repository itself; pytest shows each suite as it ends."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_check(repository: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(repository / "Tests" / "check-citations.sh")], capture_output=True, text=True,
                          timeout=60)


def scratch_repository(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    """A git repository holding the check script and `files` (path → text), all added to the index."""
    (tmp_path / "Tests").mkdir()
    shutil.copy(ROOT / "Tests" / "check-citations.sh", tmp_path / "Tests" / "check-citations.sh")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    return tmp_path


def test_the_repository_cites_only_what_it_contains():
    result = run_check(ROOT)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout


def test_each_kind_of_outside_citation_fails_the_check(tmp_path):
    # Assembled here, so that this file does not itself hold what the check refuses.
    design, notes = "DES" + "IGN", "no" + "tes"
    citations = [f"({design} §3)", f"see {design}.md", f"rest-api-v2-{notes} §6", f"jsonrpc-{notes}.md",
                 f"swift-linux-{notes} §2", f"adobe-pass-sdk-{notes} §2.1", f"{'apple-sso'}-cookbook step 4",
                 f"{'..'}/shared/STYLE.md", f"{'issue'} 12"]
    files = {f"Sources/M/File{n}.swift": f"/// Does a thing ({text}).\nlet x{n} = 1\n" for n, text in enumerate(citations)}
    files["Sources/M/Clean.swift"] = '/// Cites ARCHITECTURE.md and Adobe\'s "Enhanced error codes".\nlet y = 2\n'
    result = run_check(scratch_repository(tmp_path, files))
    assert result.returncode == 1
    flagged = sorted(line.split(":")[0] for line in result.stdout.splitlines())
    assert flagged == sorted(f"Sources/M/File{n}.swift" for n in range(len(citations)))
    assert "cite documents the repository does not contain" in result.stderr


def test_a_clean_tree_passes_the_check(tmp_path):
    result = run_check(scratch_repository(tmp_path, {"README.md": "See ARCHITECTURE.md and Protocol/README.md.\n"}))
    assert (result.returncode, result.stdout) == (0, "")


def test_pytest_prints_one_line_per_suite_with_its_time_and_the_reason_of_each_skip(tmp_path):
    """What Tests/run-all.sh shows while pytest runs: the suite lines of conftest.py, and `-rs`'s reasons."""
    for name, body in [("test_first.py", "def test_a():\n    pass\n\ndef test_b():\n    pass\n"),
                       ("test_second.py", "import pytest\n\ndef test_c():\n    pass\n\n"
                                          "@pytest.mark.skip(reason='no widget on this machine')\ndef test_d():\n    pass\n")]:
        (tmp_path / name).write_text(body)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "conftest", "-p", "no:cacheprovider", "test_first.py",
                          "test_second.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "Tests" / "python")})
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert [re.sub(r": \d+ s,", ": N s,", line) for line in lines if line.startswith("== ")] == [
        "== test_first.py: N s, 2 passed", "== test_second.py: N s, 1 passed, 1 skipped"], run.stdout
    assert any(line.startswith("SKIPPED [1] test_second.py:") and line.endswith(": no widget on this machine") for line in lines), run.stdout
