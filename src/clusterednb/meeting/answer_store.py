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

import pandas as pd

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.features import FEATURE_NAMES, LABELS, MEETING_FEATURES
from clusterednb.meeting.sqlite_file import SQLiteFile

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


class FeedbackStore(SQLiteFile):
    """Per-user meeting decisions in an SQLite file.

    Parameters
    ----------
    path : str or Path
        Created with its table when absent.
    timeout : float, default=30.0
        Seconds a write waits for another writer to finish before the store is reported busy.

    Examples
    --------
    >>> from clusterednb.examples import models as data_toy
    >>> from clusterednb.examples import meeting as toy
    >>> answer = toy.organisation().requests.iloc[0]
    >>> with FeedbackStore(data_toy.scratch_file("answers.db")) as store:
    ...     store.record("user00", "m1", answer.to_dict(), accepted=True)
    ...     store.frame()[["user", "uid", "accepted"]].values.tolist()
    [['user00', 'm1', 'accept']]
    """

    kind = "feedback store"

    def _create(self) -> None:
        self._execute(_SCHEMA)

    def record(
        self,
        user: str,
        uid: str,
        features: dict[str, str],
        accepted: bool,
        when: dt.datetime | None = None,
    ) -> None:
        """Record one decision atomically (replacing an earlier one for the same request).

        Examples
        --------
        Recording the same request again replaces the earlier answer:

        >>> from clusterednb.examples import models as data_toy
        >>> from clusterednb.examples import meeting as toy
        >>> answer = toy.organisation().requests.iloc[0].to_dict()
        >>> with FeedbackStore(data_toy.scratch_file("answers.db")) as store:
        ...     store.record("user00", "m1", answer, accepted=True)
        ...     store.record("user00", "m1", answer, accepted=False)
        ...     store.frame()["accepted"].tolist()
        ['decline']
        >>> with FeedbackStore(data_toy.scratch_file("answers.db")) as store:
        ...     store.record("user00", "m2", {**answer, "duration": "45"}, accepted=True)
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        clusterednb.meeting.errors.MeetingError: feature 'duration' has value '45', not one of ...
        """
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
        with self._transaction():
            self._execute(
                f"INSERT OR REPLACE INTO feedback (user, uid, recorded_at, accepted, {names}) "
                f"VALUES ({marks})",
                values,
            )

    def frame(self, user: str | None = None) -> pd.DataFrame:
        """Recorded decisions (of one user, or everyone) in recording order.

        Returns
        -------
        DataFrame
            Columns ``user``, ``uid``, ``recorded_at``, ``accepted`` and the 15 features.

        Examples
        --------
        >>> from clusterednb.examples import models as data_toy
        >>> from clusterednb.examples import meeting as toy
        >>> requests = toy.organisation().requests
        >>> with FeedbackStore(data_toy.scratch_file("answers.db")) as store:
        ...     store.record("user00", "m1", requests.iloc[0].to_dict(), accepted=True)
        ...     store.record("user01", "m2", requests.iloc[1].to_dict(), accepted=False)
        ...     everyone, user01 = store.frame(), store.frame("user01")
        >>> len(everyone), user01["uid"].tolist(), len(everyone.columns)
        (2, ['m2'], 19)
        """
        query = "SELECT * FROM feedback"
        parameters: tuple[str, ...] = ()
        if user is not None:
            query += " WHERE user = ?"
            parameters = (user,)
        cursor = self._execute(query + " ORDER BY recorded_at, rowid", parameters)
        columns = [description[0] for description in cursor.description]
        return pd.DataFrame(cursor.fetchall(), columns=columns)
