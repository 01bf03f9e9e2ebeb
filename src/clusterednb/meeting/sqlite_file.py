"""One SQLite file opened the way every store of the project opens it.

Write-ahead log (readers never block a writer nor a writer the readers), ``synchronous=FULL``
(a committed transaction survives a crash), foreign keys on, one connection shared by a
process's threads behind a lock, and every write one ``BEGIN IMMEDIATE`` … ``COMMIT``
transaction. Writers queue for up to ``timeout`` seconds (SQLite's busy handler); a file
still held by another writer after that is reported as busy, a file that is not a database
of the subclass's kind as such — both as :class:`~clusterednb.meeting.errors.MeetingError`,
never as a bare ``sqlite3`` error.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Self

from clusterednb.meeting.errors import MeetingError


class SQLiteFile:
    """Base of the stores: the connection, transactions and error translation.

    Subclasses set :attr:`kind` (named in errors) and create or migrate their schema in
    :meth:`_create`, which runs once when the file is opened.

    Parameters
    ----------
    path : str or Path
        Created when absent.
    timeout : float, default=30.0
        Seconds a write waits for another writer before the file is reported busy.

    Examples
    --------
    >>> import tempfile
    >>> class Notes(SQLiteFile):
    ...     kind = "notes file"
    ...     def _create(self):
    ...         self._execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
    >>> path = Path(tempfile.mkdtemp()) / "notes.sqlite"
    >>> with Notes(path) as notes:
    ...     with notes._transaction() as connection:
    ...         _ = connection.execute("INSERT INTO notes VALUES ('hello')")
    ...     notes._all("SELECT text FROM notes")
    [('hello',)]
    >>> _ = path.with_name("junk").write_bytes(b"not a database" * 100)
    >>> Notes(path.with_name("junk"))
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: .../junk is not a notes file: file is not a database
    """

    kind: ClassVar[str] = "SQLite store"
    rows_by_name: ClassVar[bool] = False  # rows as sqlite3.Row (columns by name) or tuples

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        try:
            self._connection = sqlite3.connect(
                self.path, isolation_level=None, timeout=timeout, check_same_thread=False
            )
            if self.rows_by_name:
                self._connection.row_factory = sqlite3.Row
            for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON"):
                self._execute(f"PRAGMA {pragma}")
            try:
                self._create()
            except sqlite3.DatabaseError as error:
                raise MeetingError(f"{self.path} is not a {self.kind}: {error}") from error
        except BaseException:
            if self._connection is not None:
                self._connection.close()
            raise

    def _create(self) -> None:
        """Create (or bring up to date) the subclass's tables."""

    def _execute(self, statement: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """Run one statement; a busy or unusable file becomes a :class:`MeetingError`."""
        with self._lock:
            try:
                return self._connection.execute(statement, parameters)
            except sqlite3.OperationalError as error:
                if "locked" in str(error) or "busy" in str(error):
                    raise MeetingError(
                        f"the store {self.path} is busy: another process has held it for "
                        "longer than the timeout; try again"
                    ) from error
                raise MeetingError(f"the store {self.path} cannot be used: {error}") from error
            except sqlite3.DatabaseError as error:
                raise MeetingError(f"{self.path} is not a {self.kind}: {error}") from error

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` around the block; ``ROLLBACK`` if it raises."""
        with self._lock:
            self._execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._execute("COMMIT")

    def _one(self, query: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Row | None:
        with self._lock:
            return self._execute(query, parameters).fetchone()

    def _all(self, query: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._execute(query, parameters).fetchall()

    def close(self) -> None:
        """Close the connection.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> from clusterednb.service.store import ServiceStore
        >>> with ServiceStore(toy.scratch_file("store.db")) as store:  # closed on leaving the block
        ...     store.counts()["users"]
        0
        """
        self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
