"""What every pass over a person's account shares, whichever the account's kind: who the
person is in the state store, the person's pass lock, and the state store itself (a
throw-away copy for a dry run)."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clusterednb.meeting.directory import UserEntry
from clusterednb.meeting.invitation import calendar_address
from clusterednb.service.passes.pass_lock import person_lock
from clusterednb.service.passes.settings import LOCK_WAIT, PassSettings


def user_key(settings: PassSettings) -> tuple[str, UserEntry | None]:
    """The store's key of the person and their directory entry: the service's user id when
    given; else the account of that address in the state store when it is a service's (so a
    manual pass over ``cnb serve``'s store is the same person, under the same lock, as the
    service's pass); else the directory's user of the address; else the address."""
    directory = settings.directory
    user = settings.user or _account_of(settings.state, calendar_address(settings.email))
    if user is not None:
        return user, directory.users.get(user) if directory else None
    if directory is not None:
        for user, entry in directory.users.items():
            if entry.email == calendar_address(settings.email):
                return user, entry
    return calendar_address(settings.email), None


def _account_of(state: Path, email: str) -> str | None:
    """The user id of the service account with address ``email`` in the store ``state``
    (None: no such store, no such account)."""
    if not Path(state).is_file():
        return None
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as connection:
        try:
            rows = connection.execute("SELECT user, email FROM users").fetchall()
        except sqlite3.DatabaseError:
            return None  # not a service store (yet): the pass's own state file
    found = [user for user, address in rows if calendar_address(address) == email]
    return found[0] if len(found) == 1 else None


@contextmanager
def person_pass(settings: PassSettings, user: str) -> Iterator[None]:
    """The person's pass lock over the store (:mod:`~clusterednb.service.passes.pass_lock`), for
    ``settings.lock_wait`` seconds at most; none for a dry run, which writes nothing."""
    if settings.dry_run:
        yield
        return
    with person_lock(settings.state, user, getattr(settings, "lock_wait", LOCK_WAIT)):
        yield


@contextmanager
def state_store(settings: PassSettings) -> Iterator[Any]:
    """The state store; for a dry run a throw-away copy of it (or a new empty one) in a
    temporary folder, so that the pass writes nothing at all where the person looks."""
    from clusterednb.service.store import ServiceStore

    if not settings.dry_run:
        with ServiceStore(settings.state) as store:
            store.keep_activity_days = settings.keep_activity_days
            yield store
        return
    with tempfile.TemporaryDirectory(prefix="cnb-dry-run-") as folder:
        copy = Path(folder) / "state.db"
        if Path(settings.state).exists():
            with sqlite3.connect(f"file:{settings.state}?mode=ro", uri=True) as source:
                with sqlite3.connect(copy) as target:
                    source.backup(target)
        with ServiceStore(copy) as store:
            yield store
