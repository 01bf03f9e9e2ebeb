"""The users' recorded decisions: an SQLite file written transactionally.

Each :meth:`FeedbackStore.record` is one transaction (``BEGIN IMMEDIATE`` … ``COMMIT``)
with ``synchronous=FULL``: a crash between two records loses nothing already recorded,
and a crash inside one leaves no partial row. Recording the same request (user, UID) again
replaces the earlier answer (the user changed their mind).

The file is in write-ahead-log mode, so readers never block a writer nor a writer the
readers; writers queue for up to ``timeout`` seconds (SQLite's busy handler) and a store
still held by another writer after that is reported as busy, never as a damaged file.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.features import FEATURE_NAMES, LABELS, MEETING_FEATURES

_COLUMNS = ", ".join(f'"{name}" TEXT NOT NULL' for name in FEATURE_NAMES)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS feedback (
    user TEXT NOT NULL,
    uid TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    accepted TEXT NOT NULL,
    {_COLUMNS},
    PRIMARY KEY (user, uid)
)
"""


class FeedbackStore:
    """Per-user meeting decisions in an SQLite file.

    Parameters
    ----------
    path : str or Path
        Created with its table when absent.
    timeout : float, default=30.0
        Seconds a write waits for another writer to finish before the store is reported busy.
    """

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._connection = None
        try:
            self._connection = sqlite3.connect(self.path, isolation_level=None, timeout=timeout)
            self._execute("PRAGMA journal_mode=WAL")
            self._execute("PRAGMA synchronous=FULL")
            self._execute(_SCHEMA)
        except BaseException:
            if self._connection is not None:
                self._connection.close()
            raise

    def _execute(self, statement: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """Run one statement; a busy store or a damaged file becomes a :class:`MeetingError`."""
        try:
            return self._connection.execute(statement, parameters)
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise MeetingError(
                    f"the store {self.path} is busy: another process has held it for longer "
                    "than the timeout; try again"
                ) from error
            raise MeetingError(f"the store {self.path} cannot be used: {error}") from error
        except sqlite3.DatabaseError as error:
            raise MeetingError(f"{self.path} is not a feedback store: {error}") from error

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def __enter__(self) -> FeedbackStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def record(
        self,
        user: str,
        uid: str,
        features: dict[str, str],
        accepted: bool,
        when: dt.datetime | None = None,
    ) -> None:
        """Record one decision atomically (replacing an earlier one for the same request)."""
        for name in FEATURE_NAMES:
            if features.get(name) not in MEETING_FEATURES[name]:
                raise MeetingError(
                    f"feature {name!r} has value {features.get(name)!r}, not one of "
                    f"{MEETING_FEATURES[name]}"
                )
        stamp = (when or dt.datetime.now(dt.UTC)).isoformat()
        names = ", ".join(f'"{n}"' for n in FEATURE_NAMES)
        marks = ", ".join("?" for _ in range(len(FEATURE_NAMES) + 4))
        values = (user, uid, stamp, LABELS[int(accepted)], *(features[n] for n in FEATURE_NAMES))
        self._execute("BEGIN IMMEDIATE")
        try:
            self._execute(
                f"INSERT OR REPLACE INTO feedback (user, uid, recorded_at, accepted, {names}) "
                f"VALUES ({marks})",
                values,
            )
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        self._execute("COMMIT")

    def frame(self, user: str | None = None) -> pd.DataFrame:
        """Recorded decisions (of one user, or everyone) in recording order.

        Returns
        -------
        DataFrame
            Columns ``user``, ``uid``, ``recorded_at``, ``accepted`` and the 15 features.
        """
        query = "SELECT * FROM feedback"
        parameters: tuple[str, ...] = ()
        if user is not None:
            query += " WHERE user = ?"
            parameters = (user,)
        cursor = self._execute(query + " ORDER BY recorded_at, rowid", parameters)
        columns = [description[0] for description in cursor.description]
        return pd.DataFrame(cursor.fetchall(), columns=columns)
