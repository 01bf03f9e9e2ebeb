"""One pass at a time for each person: passes over one store (``cnb serve``'s schedule, a
manual ``cnb meeting sync`` or ``cnb meeting mail``, a second service) exclude each other per
person, so that no invitation is decided or answered twice.

The lock is an operating-system file lock (``flock``, through :mod:`filelock`) on a file in a
folder beside the store, one file a person: it is released when the pass ends and also when
its process dies, ``kill -9`` included, so a crash never leaves a person locked out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from clusterednb.meeting.errors import MeetingError


class PassBusy(MeetingError):
    """Another pass for the same person holds the lock (exit status 75, EX_TEMPFAIL: try
    again later).

    Examples
    --------
    >>> PassBusy("busy").exit_status
    75
    """

    exit_status = 75


def lock_path(store: str | Path, user: str) -> Path:
    """The lock file of ``user``'s passes over ``store`` (the person's name hashed: no
    address in a file name).

    Examples
    --------
    >>> lock_path("/srv/service.db", "ann").parent.name
    'service.db.locks'
    """
    digest = hashlib.sha256(user.encode("utf-8")).hexdigest()[:32]
    return Path(f"{store}.locks") / f"{digest}.lock"


@contextmanager
def person_lock(store: str | Path, user: str, wait: float) -> Iterator[None]:
    """Hold ``user``'s pass lock over ``store`` for the block, waiting up to ``wait`` seconds
    for another pass to finish (:class:`PassBusy` after that).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> store = toy.scratch_file("locked.db")
    >>> with person_lock(store, "ann", wait=1):
    ...     with person_lock(store, "ann", wait=0.1):  # a second pass of ann's must wait
    ...         pass
    Traceback (most recent call last):
    ...
    clusterednb.service.passes.pass_lock.PassBusy: another pass for ann is under way on
    .../locked.db (waited 0.1 s); try again when it ends
    >>> with person_lock(store, "bob", wait=0.1):  # other people are not held up
    ...     "bob's pass"
    "bob's pass"
    """
    path = lock_path(store, user)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    lock = FileLock(path, timeout=wait, thread_local=False, mode=0o600)
    try:
        lock.acquire()
    except Timeout:
        raise PassBusy(
            f"another pass for {user} is under way on {store} (waited {wait:g} s); try again "
            "when it ends"
        ) from None
    try:
        yield
    finally:
        lock.release()
