"""Where ``spawn()`` finds the ``passbridge`` daemon.

In this order: the ``executable`` argument (a path, or a name looked up in ``PATH``); the ``PASSBRIDGE``
environment variable (the same variable ``Clients/shell/passbridge-call`` reads); the daemon bundled in the
platform wheel (``passbridge/_bin/passbridge``, built by ``Clients/python/build-wheel.sh``); ``passbridge`` in
``PATH``. When none is an executable file, ``DaemonNotFound`` lists what was tried and what to install.
"""
import os
import shutil
from pathlib import Path
from typing import List, Mapping, Optional

from .errors import DaemonNotFound

#: The folder of the daemon bundled in the platform wheel (absent from a source install).
BUNDLED_DIR = Path(__file__).resolve().parent / "_bin"


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_daemon(executable: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> str:
    """The path of the daemon to spawn; ``env`` (default ``os.environ``) gives ``PASSBRIDGE`` and ``PATH``.

    An explicit ``executable`` or ``PASSBRIDGE`` is the only candidate when given: a wrong one is an error, not a
    reason to run another daemon. Raises ``DaemonNotFound`` naming every place looked at."""
    environment = os.environ if env is None else env
    search_path = environment.get("PATH", os.defpath)
    looked: List[str] = []
    chosen = executable if executable is not None else environment.get("PASSBRIDGE") or None
    if chosen is not None:
        origin = "executable=" if executable is not None else "$PASSBRIDGE"
        if os.sep in chosen:
            if _executable(chosen):
                return chosen
            looked.append(f"{origin} {chosen} (not an executable file)")
        else:
            found = shutil.which(chosen, path=search_path)
            if found is not None:
                return found
            looked.append(f"{origin} {chosen!r} in PATH={search_path}")
        raise DaemonNotFound(looked)
    looked.append("$PASSBRIDGE (not set)")
    bundled = str(BUNDLED_DIR / "passbridge")
    if _executable(bundled):
        return bundled
    looked.append(f"{bundled} (this install of the package carries no daemon)")
    found = shutil.which("passbridge", path=search_path)
    if found is not None:
        return found
    looked.append(f"'passbridge' in PATH={search_path}")
    raise DaemonNotFound(looked)


__all__ = ["BUNDLED_DIR", "find_daemon"]
