"""The record of what the assistant did on each person's behalf, in the service's store.

Every decision stored (by the model or by one of the person's rules), every question raised,
every answer the person gave, every PARTSTAT written on their calendar server and every REPLY
the SMTP server took (or refused for good) adds one row to ``activity``, in the same
transaction as the act it records, so the record never says more or less than the store.
A row carries the time, the invitation (summary, organiser, UID, RECURRENCE-ID, SEQUENCE),
the decision, the probability and the reason in words. Rows older than the store's
``keep_activity_days`` are forgotten as new ones arrive.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from typing import Any

from clusterednb.service.accounts import utc_now

ACTIVITY_TABLES = [
    """CREATE TABLE IF NOT EXISTS activity (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    request_id INTEGER NOT NULL,
    channel TEXT NOT NULL,
    uid TEXT NOT NULL,
    recurrence_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    summary TEXT NOT NULL,
    organizer TEXT NOT NULL,
    decision TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    p_accept REAL,
    reason TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS activity_by_user ON activity (user, at)",
]
ACTIVITY_FIELDS = (
    "at",
    "action",
    "request_id",
    "channel",
    "uid",
    "recurrence_id",
    "sequence",
    "summary",
    "organizer",
    "decision",
    "decided_by",
    "p_accept",
    "reason",
)
"""The fields of an entry of the record, in the order the CSV export writes them."""
ACTIONS = {
    "accept": "decided",
    "decline": "decided",
    "ask": "asked",
    "expired": "not answered: the meeting had begun",
}
"""The entry a stored decision adds, by decision."""
KEEP_ACTIVITY_DAYS = 365.0
"""How long an entry is kept unless the store is told otherwise (``cnb serve --keep-activity``)."""


def reasons_in_words(reasons: list[dict[str, Any]], limit: int = 3) -> list[str]:
    """The first ``limit`` reasons of a decision as a person reads them.

    Examples
    --------
    >>> reasons_in_words([{"feature": "organizer_relation", "value": "manager / other",
    ...                    "log_odds": 1.2}, {"words": "outside your working hours",
    ...                    "log_odds": 0.0}])
    ['organizer relation: manager (for accepting)', 'outside your working hours']
    """
    words = []
    for reason in reasons[:limit]:
        direction = "for accepting" if reason["log_odds"] > 0 else "for declining"
        if reason["log_odds"] == 0 and reason.get("words"):  # a rule's reason: no direction
            words.append(reason["words"])
            continue
        if reason.get("words"):
            words.append(f"{reason['words']} ({direction})")
            continue
        parts = [p for p in reason["value"].split(" / ") if p not in ("other", "None")]
        value = ", ".join(dict.fromkeys(parts)) or reason["value"]
        words.append(f"{reason['feature'].replace('_', ' ')}: {value} ({direction})")
    return words


def _decided_by(row: sqlite3.Row, reasons: list[dict[str, Any]]) -> str:
    """ "you" (the person answered), "rule" (one of their rules decided) or "model"."""
    if row["answer"] is not None:
        return "you"
    first = reasons[0] if reasons else {}
    if row["decision"] in ("accept", "decline") and first.get("log_odds") == 0:
        return "rule"
    return "model"


class ActivityTables:
    """The record's rows (a mixin of :class:`~clusterednb.service.store.ServiceStore`).

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> record, _ = store.add_request("ann", toy.request_record())
    >>> [(entry["action"], entry["decision"], entry["summary"]) for entry in store.activity("ann")]
    [('decided', 'accept', 'Planning')]
    >>> store.activity("bob")
    []
    """

    keep_activity_days: float = KEEP_ACTIVITY_DAYS

    def _note(
        self, connection: sqlite3.Connection, user: str, request_id: int, action: str | None
    ) -> None:
        """Record ``action`` on one of ``user``'s requests, in the caller's transaction, and
        forget ``user``'s entries older than ``keep_activity_days``."""
        row = connection.execute(
            "SELECT * FROM requests WHERE user = ? AND id = ?", (user, request_id)
        ).fetchone()
        if row is None or action is None:
            return
        reasons = json.loads(row["reasons"])
        decided_by = _decided_by(row, reasons)
        decision = row["answer"] or row["decision"]
        reason = "your own answer" if decided_by == "you" else "; ".join(reasons_in_words(reasons))
        now = utc_now()
        connection.execute(
            f"INSERT INTO activity (user, {', '.join(ACTIVITY_FIELDS)}) "
            f"VALUES (?, {', '.join('?' for _ in ACTIVITY_FIELDS)})",
            (
                user,
                now,
                action,
                request_id,
                row["channel"],
                row["uid"],
                row["recurrence_id"],
                row["sequence"],
                row["summary"],
                row["organizer"],
                decision,
                decided_by,
                None if decided_by == "you" else row["p_accept"],
                reason,
            ),
        )
        oldest = dt.datetime.fromisoformat(now) - dt.timedelta(days=self.keep_activity_days)
        connection.execute(
            "DELETE FROM activity WHERE user = ? AND at < ?", (user, oldest.isoformat())
        )

    def activity(self, user: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The record, newest first: ``user``'s entries (None: everyone's, for an
        administrator), at most ``limit`` of them.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record())
        >>> _ = store.answer("ann", record["id"], accepted=False)
        >>> [(e["action"], e["decision"], e["decided_by"]) for e in store.activity("ann")]
        [('answered', 'decline', 'you'), ('decided', 'accept', 'model')]
        """
        query = "SELECT * FROM activity"
        values: tuple[Any, ...] = ()
        if user is not None:
            query, values = query + " WHERE user = ?", (user,)
        query += " ORDER BY id DESC"
        if limit is not None:
            query, values = query + " LIMIT ?", (*values, int(limit))
        return [dict(row) for row in self._all(query, values)]

    def overview(self, user: str) -> dict[str, int]:
        """What is waiting for ``user`` (an administrator's view): questions not answered,
        replies owed and refused, answers learnt from.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> _ = store.add_request("ann", toy.request_record() | {"decision": "ask"})
        >>> store.overview("ann")
        {'asks_waiting': 1, 'owed_replies': 0, 'failed_replies': 0, 'answers': 0}
        """
        row = self._one(
            "SELECT (SELECT count(*) FROM requests WHERE user = :u AND decision = 'ask' "
            "AND answer IS NULL AND state = 'open' AND origin = 'invitation') AS asks_waiting, "
            "(SELECT count(*) FROM outbox WHERE user = :u AND state = 'owed') AS owed_replies, "
            "(SELECT count(*) FROM outbox WHERE user = :u AND state = 'failed') AS failed_replies, "
            "(SELECT count(*) FROM requests WHERE user = :u AND answer IS NOT NULL) AS answers",
            {"u": user},
        )
        return {name: int(row[name]) for name in row.keys()}
