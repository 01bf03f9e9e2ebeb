"""Numba's ``njit`` with a compile cache that every install can write.

Every kernel module imports ``njit`` from here. Numba caches compiled kernels beside their
source (``__pycache__``) and, where that is read-only, under the user's cache directory;
where neither can be written (a read-only install run by a user without a home, as in many
containers and services) it caches nothing, and every new process pays the ~10 s compile
again. Before any kernel is decorated, this module checks that Numba has somewhere to
write and, if it has not, points it at ``$XDG_CACHE_HOME/clusterednb/numba`` or, failing
that, a per-user folder in the system's temporary directory. ``NUMBA_CACHE_DIR``, when set,
is always respected.

:func:`clusterednb.warmup.warm_up` (``cnb warm-up``) compiles every kernel once so that the
first fit of later processes loads them from the cache.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numba
from numba import njit

__all__ = ["cache_directory", "njit"]

_PACKAGE = Path(__file__).resolve().parent


def _writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (created if missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "clusterednb" / "numba"


def _chosen_directory() -> Path | None:
    """Where the kernels' cache should go, or ``None`` where Numba's own choice works."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    in_tree = [_PACKAGE / "__pycache__", _PACKAGE / "inference" / "__pycache__"]
    if all(_writable(folder) for folder in in_tree):
        return None
    try:
        user = _user_cache()
    except RuntimeError:  # no home directory can be determined
        user = None
    if user is not None and _writable(user):
        return user
    return Path(tempfile.gettempdir()) / f"clusterednb-numba-{os.getuid()}"


def cache_directory() -> Path:
    """The folder that holds (or will hold) the compiled kernels of this install.

    Returns
    -------
    pathlib.Path
        ``NUMBA_CACHE_DIR`` if set; else the package's own ``__pycache__`` folders (the
        one of this module is returned) when they are writable; else the per-user folder
        chosen at import.

    Examples
    --------
    >>> folder = cache_directory()
    >>> expected = numba.config.CACHE_DIR or _PACKAGE / "__pycache__"
    >>> folder == Path(expected)
    True
    """
    if numba.config.CACHE_DIR:
        return Path(numba.config.CACHE_DIR)
    return _PACKAGE / "__pycache__"


_directory = _chosen_directory()
if _directory is not None and not numba.config.CACHE_DIR:
    _directory.mkdir(parents=True, exist_ok=True)
    numba.config.CACHE_DIR = str(_directory)
