"""Writes a section 1 man page, in plain roff (man macros), from a command's `--help` on stdin.

    passbridge --help | python3 help2roff.py passbridge VERSION EPOCH > passbridge.1

NAME is passbridge, passbridge-relay or passbridge-call. The help of passbridge and passbridge-relay has the
shape of an OptionTable's usage (DaemonOptions.usage): "USAGE:" lines, a paragraph, then sections "NAME:" of
options, each "  --flag ARG   help" with continuation lines indented further (a long flag has its help on the
next lines); each option becomes a .TP entry. The help of the shell client passbridge-call (the comment at the top
of Clients/shell/passbridge-call) is free text: its first line is the summary, the rest is shown as it is. For
passbridge, a few fixed sections (FILES, ENVIRONMENT) say where the package puts things. Used by build-deb.sh,
so no man page can drift from the flags its command accepts.
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


#: The NAME line of each page.
SUMMARIES = {
    "passbridge": "Adobe Pass AccessEnabler over JSON-RPC 2.0 (stdio or a Unix socket)",
    "passbridge-relay": "connect stdin and stdout to a passbridge daemon's Unix socket",
    "passbridge-call": "call the PassBridge daemon from a shell script",
}


def free_text(name: str, lines: List[str]) -> List[str]:
    """The page of a help that is free text: its first line (`NAME — summary`) dropped, the rest shown as it is."""
    body = lines[1:] if lines and lines[0].startswith(name) else lines
    while body and not body[0].strip():
        body = body[1:]
    return [".SH DESCRIPTION", ".nf"] + [roff(line) if line.strip() else "" for line in body] + [".fi"]


def main() -> None:
    name, version, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lines = sys.stdin.read().splitlines()
    date = time.strftime("%Y-%m-%d", time.gmtime(epoch))
    title = roff(name.upper())
    out = [f'.TH {title} 1 "{date}" "{roff(name)} {version}" "User Commands"', ".SH NAME",
           f"{roff(name)} \\- {roff(SUMMARIES[name])}"]
    if not lines or not lines[0].startswith("USAGE:"):
        out += free_text(name, lines) + [".SH SEE ALSO", "\\fBpassbridge\\fR(1), \\fBpassbridge\\-relay\\fR(1)"]
        sys.stdout.write("\n".join(out) + "\n")
        return
    usage, description, sections = parse(lines)
    out.append(".SH SYNOPSIS")
    for i, line in enumerate(usage):
        out += ([] if i == 0 else [".br"]) + [f"\\fB{roff(line.split(' ', 1)[0])}\\fR {roff(line.split(' ', 1)[1])}"]
    out += [".SH DESCRIPTION", roff(" ".join(description))]
    for heading, options in sections:
        out.append(f".SH {roff(heading)}")
        for flag, help_text in options:
            out += [".TP", f"\\fB{roff(flag)}\\fR", roff(help_text)]
    if name != "passbridge":
        out += [".SH SEE ALSO", "\\fBpassbridge\\fR(1), \\fBpassbridge\\-call\\fR(1)"]
        sys.stdout.write("\n".join(out) + "\n")
        return
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
        ".SH SEE ALSO", "\\fBpassbridge\\-call\\fR(1), \\fBpassbridge\\-relay\\fR(1),",
        "\\fBsystemd.socket\\fR(5), /usr/share/doc/passbridge/README.md",
    ]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
