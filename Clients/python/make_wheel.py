"""Writes PassBridge's platform wheels with the standard library only (zipfile, hashlib); called by build-wheel.sh.

    python3 make_wheel.py --version V --tag TAG --out DIR --daemon PATH --relay PATH [--emulator PATH]

* ``passbridge-V-TAG.whl``: the client package (``passbridge/*.py``, ``py.typed``) plus the daemon as
  ``passbridge/_bin/passbridge`` (mode 0755), where ``passbridge.find_daemon`` looks for it, and the relay as
  ``passbridge/_bin/passbridge-relay``; the scripted browser of the examples (``examples/browser.py``, what the
  README's first snippet uses in place of a web view) as ``passbridge/browser.py`` (``python3 -m
  passbridge.browser URL --field username=demo …``); the shell client ``Clients/shell/passbridge-call`` as a script
  (pip puts it in the environment's ``bin``); and the console scripts ``passbridge`` and ``passbridge-relay``
  (``passbridge._commands``), which run the bundled binaries, so ``passbridge state list`` and ``passbridge-call``
  work in the environment. The extra ``emulator`` requires the second wheel.
* with ``--emulator``, ``passbridge_emulator-V-TAG.whl``: ``passbridge/_bin/pass-emulator``, beside the daemon,
  which is where ``passbridge --backend emulator`` starts it from, and the console script ``pass-emulator``
  (``passbridge/_emulator.py``, a module only this wheel carries: its ``passbridge`` folder then holds Python, as
  check-wheel-contents asks of a top-level folder).

The layout follows the binary distribution format of the Python Packaging User Guide ("Binary distribution
format"): a ``NAME-V.dist-info`` folder with METADATA (core metadata 2.1), WHEEL (``Root-Is-Purelib: false``, one
tag), entry_points.txt (the console scripts; "Entry points specification"), scripts under ``NAME-V.data/scripts``
and RECORD (each file's urlsafe-base64 SHA-256 without padding and its size; RECORD itself unhashed). Entries
are sorted and dated SOURCE_DATE_EPOCH (else the newest commit), so the same tree gives the same bytes.
"""
import argparse
import base64
import hashlib
import os
import pathlib
import subprocess
import time
import zipfile
from typing import Dict, List, Tuple

HERE = pathlib.Path(__file__).resolve().parent
Entry = Tuple[str, bytes, bool]  # path in the wheel, contents, executable


def epoch() -> int:
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    run = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=HERE, capture_output=True, text=True)
    return int(run.stdout.strip()) if run.returncode == 0 and run.stdout.strip() else int(time.time())


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(out: pathlib.Path, name: str, version: str, tag: str, metadata: str, entries: List[Entry],
                commands: Dict[str, str]) -> pathlib.Path:
    """Writes ``{name}-{version}-{tag}.whl`` into ``out`` from ``entries`` plus its dist-info, with ``commands``
    ({command: "module:function"}) as its console scripts; returns its path."""
    dist_info = f"{name}-{version}.dist-info"
    wheel = f"Wheel-Version: 1.0\nGenerator: PassBridge make_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files = sorted(entries) + [(f"{dist_info}/METADATA", metadata.encode(), False),
                               (f"{dist_info}/WHEEL", wheel.encode(), False)]
    if commands:
        scripts = "[console_scripts]\n" + "".join(f"{command} = {target}\n" for command, target in sorted(commands.items()))
        files.append((f"{dist_info}/entry_points.txt", scripts.encode(), False))
    record = "".join(f"{path},{digest(data)},{len(data)}\n" for path, data, _ in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), False))
    stamp = time.gmtime(max(epoch(), 315532800))[:6]  # zip dates start in 1980
    path = out / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for member, data, executable in files:
            info = zipfile.ZipInfo(member, date_time=stamp)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return path


def metadata(name: str, version: str, summary: str, requires: List[str], extras: List[str], readme: str) -> str:
    lines = [
        "Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {summary}",
        "License: Apache-2.0", "Requires-Python: >=3.9",
        "Classifier: License :: OSI Approved :: Apache Software License",
        "Classifier: Programming Language :: Python :: 3", "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Typing :: Typed", "Classifier: Framework :: AsyncIO",
    ]
    lines += [f"Provides-Extra: {extra}" for extra in extras]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    lines += ["Description-Content-Type: text/markdown", "", readme]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--daemon", required=True, type=pathlib.Path)
    parser.add_argument("--relay", required=True, type=pathlib.Path)
    parser.add_argument("--emulator", type=pathlib.Path)
    args = parser.parse_args()
    package = HERE / "passbridge"
    sources = sorted(p for p in package.iterdir() if p.is_file() and (p.suffix == ".py" or p.name == "py.typed")
                     and p.name != "_emulator.py")
    entries: List[Entry] = [(f"passbridge/{p.name}", p.read_bytes(), False) for p in sources]
    entries.append(("passbridge/browser.py", (HERE / "examples" / "browser.py").read_bytes(), False))
    entries.append(("passbridge/_bin/passbridge", args.daemon.read_bytes(), True))
    entries.append(("passbridge/_bin/passbridge-relay", args.relay.read_bytes(), True))
    shell_client = HERE.parent / "shell" / "passbridge-call"
    entries.append((f"passbridge-{args.version}.data/scripts/passbridge-call", shell_client.read_bytes(), True))
    readme = (HERE / "README.md").read_text()
    client = write_wheel(args.out, "passbridge", args.version, args.tag, metadata(
        "passbridge", args.version,
        "Adobe Pass AccessEnabler for Python: the PassBridge client with the passbridge daemon bundled",
        [f'passbridge-emulator=={args.version}; extra == "emulator"'], ["emulator"], readme), entries,
        {"passbridge": "passbridge._commands:daemon", "passbridge-relay": "passbridge._commands:relay"})
    print(client)
    if args.emulator is not None:
        emulator = write_wheel(args.out, "passbridge_emulator", args.version, args.tag, metadata(
            "passbridge-emulator", args.version,
            "pass-emulator, PassBridge's offline Adobe Pass REST API V2 emulator, for passbridge --backend emulator",
            [f"passbridge=={args.version}"], [],
            "The `pass-emulator` binary, installed beside the daemon of the `passbridge` wheel so that\n"
            "`passbridge.AccessEnabler.spawn(\"--backend\", \"emulator\")` works offline. See the passbridge wheel.\n"),
            [("passbridge/_bin/pass-emulator", args.emulator.read_bytes(), True),
             ("passbridge/_emulator.py", (package / "_emulator.py").read_bytes(), False)],
            {"pass-emulator": "passbridge._emulator:main"})
        print(emulator)


if __name__ == "__main__":
    main()
