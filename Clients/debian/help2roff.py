"""Writes the passbridge(1) man page, in plain roff (man macros), from `passbridge --help` on stdin.

    passbridge --help | python3 help2roff.py VERSION EPOCH > passbridge.1

The help's shape (DaemonOptions.usage): "USAGE:" lines, a paragraph, then sections "NAME:" of options, each
"  --flag ARG   help" with continuation lines indented further (a long flag has its help on the next lines).
Each option becomes a .TP entry; a few fixed sections (FILES, ENVIRONMENT, SEE ALSO) say where the package puts
things. Used by build-deb.sh, so the man page cannot drift from the flags the binary accepts.
"""
import re
import sys
import time
from typing import List, Tuple


def roff(text: str) -> str:
    """Text safe in roff: backslashes escaped, hyphens as minus signs, no control character at line start."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def parse(lines: List[str]) -> Tuple[List[str], List[str], List[Tuple[str, List[Tuple[str, str]]]]]:
    usage: List[str] = []
    description: List[str] = []
    sections: List[Tuple[str, List[Tuple[str, str]]]] = []
    for line in lines:
        if not sections and line.startswith("USAGE:"):
            usage.append(line[len("USAGE:"):].strip())
        elif not sections and usage and line.startswith("       ") and not description:
            usage.append(line.strip())
        elif re.fullmatch(r"[A-Z][A-Z ]*:", line):
            sections.append((line[:-1], []))
        elif not sections:
            if line.strip():
                description.append(line.strip())
        elif re.match(r"  \S", line):
            flag, _, help_text = line.strip().partition("  ")
            sections[-1][1].append((flag.strip(), help_text.strip()))
        elif line.strip() and sections[-1][1]:
            flag, help_text = sections[-1][1][-1]
            sections[-1][1][-1] = (flag, (help_text + " " + line.strip()).strip())
    return usage, description, sections


def main() -> None:
    version, epoch = sys.argv[1], int(sys.argv[2])
    usage, description, sections = parse(sys.stdin.read().splitlines())
    date = time.strftime("%Y-%m-%d", time.gmtime(epoch))
    out = [f'.TH PASSBRIDGE 1 "{date}" "passbridge {version}" "User Commands"', ".SH NAME",
           "passbridge \\- Adobe Pass AccessEnabler over JSON\\-RPC 2.0 (stdio or a Unix socket)", ".SH SYNOPSIS"]
    for i, line in enumerate(usage):
        out += ([] if i == 0 else [".br"]) + [f"\\fB{roff(line.split(' ', 1)[0])}\\fR {roff(line.split(' ', 1)[1])}"]
    out += [".SH DESCRIPTION", roff(" ".join(description))]
    for name, options in sections:
        out.append(f".SH {roff(name)}")
        for flag, help_text in options:
            out += [".TP", f"\\fB{roff(flag)}\\fR", roff(help_text)]
    out += [
        ".SH FILES", ".TP", "\\fB/usr/lib/systemd/system/passbridge.socket\\fR, \\fBpassbridge.service\\fR",
        "One daemon for the box, socket\\-activated on \\fB/run/passbridge/passbridge.sock\\fR.",
        ".TP", "\\fB/etc/passbridge/software\\-statement\\fR",
        "The software statement Adobe issued (root only, 0600), handed to the daemon as a systemd credential.",
        ".TP", "\\fB/var/lib/passbridge\\fR", "The service's state directory: tokens, registrations, profiles.",
        ".SH ENVIRONMENT", ".TP", "\\fBSTATE_DIRECTORY\\fR, \\fBXDG_STATE_HOME\\fR",
        "Where the state goes when \\fB\\-\\-state\\-dir\\fR is not given.",
        ".TP", "\\fBLISTEN_FDS\\fR, \\fBLISTEN_PID\\fR", "Set by systemd: serve the inherited socket, fd 3.",
        ".TP", "\\fBMALLOC_ARENA_MAX\\fR", "glibc malloc arenas (the daemon caps them at two otherwise).",
        ".SH SEE ALSO", "\\fBpassbridge\\-call\\fR (a shell client, \\fB/usr/bin/passbridge\\-call \\-\\-help\\fR),",
        "\\fBsystemd.socket\\fR(5), /usr/share/doc/passbridge/README.md",
    ]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
