"""The ``pass-emulator`` command of the emulator wheel (``passbridge_emulator``): runs the ``pass-emulator`` binary
that wheel installs in ``passbridge/_bin``, beside the daemon of the ``passbridge`` wheel (where ``passbridge
--backend emulator`` starts it from), with the same arguments, in place of this process.

Only the emulator wheel carries this module (``Clients/python/make_wheel.py``), so that its ``passbridge`` folder
holds a Python module of its own and its command does not depend on a module of the other wheel; a source install
of the package has no ``_bin`` folder, and the command then exits 1 saying which wheel carries the binary.
"""
from typing import NoReturn

from ._commands import run_bundled


def main() -> NoReturn:
    """``pass-emulator …``: the emulator of the passbridge_emulator wheel."""
    run_bundled("pass-emulator", "passbridge_emulator")
