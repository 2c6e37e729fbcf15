"""The repository stands alone: Tests/check-citations.sh (run by Tests/run-all.sh) fails on a citation of a
document the repository does not contain, and passes on the repository itself; pytest shows each suite as it ends;
every shell file is shellcheck clean; the build tool that embeds Protocol/openrpc.json leaves an unchanged output
untouched."""
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


def shell_files(repository: pathlib.Path) -> list[pathlib.Path]:
    """Every tracked shell file: a `.sh` name, a `#!` line naming sh or bash, or a `# shellcheck shell=` line (a file
    meant to be sourced)."""
    tracked = subprocess.run(["git", "-C", str(repository), "ls-files", "-z"], capture_output=True, check=True).stdout
    return shell_files_in(repository, tracked.decode().split("\0"))


def shell_files_in(repository: pathlib.Path, names: "list[str] | None" = None) -> list[pathlib.Path]:
    """The shell files among `names` (every file under `repository` when None), by the rule of shell_files."""
    if names is None:
        names = sorted(str(p.relative_to(repository)) for p in repository.rglob("*") if p.is_file())
    found = []
    for name in names:
        path = repository / name
        if not name or not path.is_file() or path.is_symlink():
            continue
        with open(path, "rb") as file:
            first = file.readline(200)
        if name.endswith(".sh") or re.match(rb"#!\S*(/|env )(ba)?sh\b", first) or first.startswith(b"# shellcheck shell="):
            found.append(path)
    return found


def shellcheck(files: list[pathlib.Path]) -> subprocess.CompletedProcess:
    if shutil.which("shellcheck") is None:
        raise AssertionError("shellcheck missing (Tests/install-deps.sh --with-test-tools installs it)")
    return subprocess.run(["shellcheck", "--severity=warning", "--format=gcc", *map(str, files)], capture_output=True,
                          text=True, timeout=300)


def test_every_shell_file_is_shellcheck_clean_at_warning_level():
    """The shell we ship (Clients/shell/passbridge-call and its examples, the .deb's maintainer scripts, the build and
    install scripts) and the shell that tests and CI run: `shellcheck -S warning` reports nothing."""
    files = shell_files(ROOT)
    names = {str(path.relative_to(ROOT)) for path in files}
    assert {"Clients/shell/passbridge-call", "Clients/shell/examples/session.sh", "Clients/debian/maintainer-scripts/postinst",
            "Clients/debian/maintainer-scripts/prerm", "Clients/debian/maintainer-scripts/postrm",
            "Clients/debian/build-deb.sh", "Clients/python/build-wheel.sh", "Clients/systemd/install.sh",
            ".ci/run"} <= names, sorted(names)
    result = shellcheck(files)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_shellcheck_as_the_suite_runs_it_reports_what_was_found_in_passbridge_call(tmp_path):
    """The check above can fail: a sourced file without a shell directive (SC2148), and the fd closing that
    Clients/shell/passbridge-call had (SC1083: `{DAEMON[0]}` is not a variable name to shellcheck)."""
    (tmp_path / "sourced.sh").write_text('echo "$1"\n')
    (tmp_path / "script").write_text('#!/usr/bin/env bash\ncoproc DAEMON { cat; }\nexec {DAEMON[0]}<&- {DAEMON[1]}>&-\n')
    result = shellcheck(shell_files_in(tmp_path))
    assert result.returncode != 0 and "[SC2148]" in result.stdout and "[SC1083]" in result.stdout, result.stdout


def test_the_openrpc_build_tool_leaves_an_unchanged_output_as_it_was(bin_dir, tmp_path):
    """embed-openrpc (the EmbedOpenRPC plugin's tool) rewrites its output only when the text changes. SwiftPM links
    the tool again and runs it whenever `swift build` sees another environment than the last build did; a rewritten
    file, even identical, made the release build compile Bridge's and the emulator's whole modules again (6–20 s
    each, measured). A changed output is written as before."""
    output = tmp_path / "OpenRPCDocument.swift"

    def embed() -> None:
        subprocess.run([str(bin_dir / "embed-openrpc"), str(ROOT / "Protocol/openrpc.json"), str(output)],
                       check=True, timeout=60)

    embed()
    generated = output.read_bytes()
    assert b"public static let version" in generated
    os.utime(output, ns=(1_000_000_000, 1_000_000_000))
    embed()
    assert (output.stat().st_mtime_ns, output.read_bytes()) == (1_000_000_000, generated)
    output.write_bytes(generated + b"// edited\n")
    embed()
    assert output.read_bytes() == generated and output.stat().st_mtime_ns != 1_000_000_000
