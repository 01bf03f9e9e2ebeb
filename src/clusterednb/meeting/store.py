"""The users' recorded decisions: an SQLite file written transactionally.

Each :meth:`FeedbackStore.record` is one transaction (``BEGIN IMMEDIATE`` … ``COMMIT``)
with ``synchronous=FULL``: a crash between two records loses nothing already recorded,
and a crash inside one leaves no partial row. Recording the same request (user, UID) again
replaces the earlier answer (the user changed their mind).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

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
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._connection = sqlite3.connect(self.path, isolation_level=None)
            self._connection.execute("PRAGMA synchronous=FULL")
            self._connection.execute(_SCHEMA)
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
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.execute(
                f"INSERT OR REPLACE INTO feedback (user, uid, recorded_at, accepted, {names}) "
                f"VALUES ({marks})",
                values,
            )
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

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
        return pd.read_sql_query(
            query + " ORDER BY recorded_at, rowid", self._connection, params=parameters
        )
