"""The commands the platform wheel installs on ``PATH``: ``passbridge`` (so ``passbridge state list`` works) and
``passbridge-relay`` (what ``passbridge-call --socket`` talks through); the emulator wheel's ``pass-emulator`` is
in ``_emulator.py``. Each runs the binary of that name the wheels carry in ``passbridge/_bin`` with the same
arguments, in place of this process (``os.execv``: same pid, exit status, signals and stdio).

``Clients/python/make_wheel.py`` declares them as console scripts; a source install of the package has no
``_bin`` folder, and the commands then exit 1 saying which wheel carries the binary.
"""
import os
import sys
from typing import NoReturn

from .locate import BUNDLED_DIR


def run_bundled(name: str, wheel: str) -> NoReturn:
    """Replaces this process with the binary ``name`` of ``passbridge/_bin``, passing this command's arguments;
    exits 1 with one line on stderr naming ``wheel`` when this install carries no such binary."""
    path = BUNDLED_DIR / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        sys.stderr.write(f"{name}: {path} is missing: this install carries no {name} (it comes with the {wheel} wheel, "
                         "built by Clients/python/build-wheel.sh)\n")
        sys.exit(1)
    os.execv(str(path), [str(path), *sys.argv[1:]])


def daemon() -> NoReturn:
    """``passbridge …``: the bundled daemon (``passbridge --help``)."""
    run_bundled("passbridge", "passbridge")


def relay() -> NoReturn:
    """``passbridge-relay SOCKET``: the bundled relay."""
    run_bundled("passbridge-relay", "passbridge")

