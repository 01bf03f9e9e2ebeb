"""The service's store: one SQLite file (WAL), one transaction per write, one schema.

Tables: ``users`` (accounts; a token is kept only as a salted scrypt hash), ``requests``
(every invitation received, its features, the decision and, once given, the person's
answer; rows of ``origin = 'history'`` are earlier answers imported as learning data, never
shown as requests), ``calendars`` (each user's calendar), ``sessions`` (browser sessions, stored
hashed, each with its CSRF token and how it was opened), ``settings`` (each user's rules),
``calendar_accounts`` and ``mail_accounts`` (:mod:`~clusterednb.service.settings_tables`). The
same (user, UID, RECURRENCE-ID, SEQUENCE) is stored once: posting it again returns the record.
Every read and write of a request names its user, so one user's rows are never returned to
another.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.sqlite_file import SQLiteFile
from clusterednb.service.accounts import SESSION_TABLES, TOKEN_TABLES, AccountTables, utc_now
from clusterednb.service.activity_tables import ACTIONS, ACTIVITY_TABLES, ActivityTables
from clusterednb.service.delivery_tables import DELIVERY_TABLES, DeliveryTables, request_dict
from clusterednb.service.settings_tables import SettingsTables

if TYPE_CHECKING:
    from clusterednb.service.delivery_tables import OutgoingReply

_PERSON_TABLES = [
    """CREATE TABLE IF NOT EXISTS settings (
    user TEXT PRIMARY KEY REFERENCES users(user),
    rules TEXT NOT NULL,
    updated_at TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS calendar_accounts (
    user TEXT PRIMARY KEY REFERENCES users(user),
    url TEXT NOT NULL,
    username TEXT NOT NULL,
    password TEXT NOT NULL,
    ca_bundle TEXT,
    updated_at TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS mail_accounts (
    user TEXT PRIMARY KEY REFERENCES users(user),
    host TEXT NOT NULL,
    port INTEGER NOT NULL,
    username TEXT NOT NULL,
    password TEXT,
    token TEXT,
    folder TEXT NOT NULL,
    ca_bundle TEXT,
    starttls INTEGER,
    updated_at TEXT NOT NULL
)""",
]
_DELIVERY_COLUMNS = [
    # what the server and the organiser should know (PARTSTAT), what the assistant confirmed
    # on the CalDAV server, what it queued to the organiser by mail, where the invitation came
    # from (caldav, mail, api), whether it is still open, and the last error acting on it
    "ALTER TABLE requests ADD COLUMN partstat TEXT",
    "ALTER TABLE requests ADD COLUMN written TEXT",
    "ALTER TABLE requests ADD COLUMN replied TEXT",
    "ALTER TABLE requests ADD COLUMN channel TEXT NOT NULL DEFAULT 'api'",
    "ALTER TABLE requests ADD COLUMN state TEXT NOT NULL DEFAULT 'open'",
    "ALTER TABLE requests ADD COLUMN last_error TEXT",
]
SCHEMA_VERSION = 6
MIGRATIONS = {
    2: ["ALTER TABLE requests ADD COLUMN origin TEXT NOT NULL DEFAULT 'invitation'"],
    3: [*_PERSON_TABLES, "ALTER TABLE requests ADD COLUMN notes TEXT NOT NULL DEFAULT '[]'"],
    4: [*_DELIVERY_COLUMNS, *DELIVERY_TABLES],
    5: [
        *ACTIVITY_TABLES,
        *TOKEN_TABLES,
        "ALTER TABLE users ADD COLUMN admin INTEGER NOT NULL DEFAULT 0",
    ],
    6: SESSION_TABLES,
}
"""Statements that bring a store of version ``v - 1`` to version ``v``."""
_LATER_TABLES = [*_PERSON_TABLES, *DELIVERY_TABLES, *ACTIVITY_TABLES, *TOKEN_TABLES, *MIGRATIONS[6]]
_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    user TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    token_salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    cost_false_accept REAL NOT NULL DEFAULT 1.0,
    cost_false_decline REAL NOT NULL DEFAULT 1.0,
    admin INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    uid TEXT NOT NULL,
    recurrence_id TEXT NOT NULL DEFAULT '',
    sequence INTEGER NOT NULL,
    received_at TEXT NOT NULL,
    ics BLOB NOT NULL,
    summary TEXT NOT NULL,
    organizer TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    features TEXT NOT NULL,
    missing TEXT NOT NULL,
    decision TEXT NOT NULL,
    p_accept REAL,
    loss_accept REAL,
    loss_decline REAL,
    reasons TEXT NOT NULL,
    answer TEXT,
    answered_at TEXT,
    origin TEXT NOT NULL DEFAULT 'invitation',
    notes TEXT NOT NULL DEFAULT '[]',
    partstat TEXT,
    written TEXT,
    replied TEXT,
    channel TEXT NOT NULL DEFAULT 'api',
    state TEXT NOT NULL DEFAULT 'open',
    last_error TEXT,
    UNIQUE (user, uid, recurrence_id, sequence)
);
CREATE INDEX IF NOT EXISTS requests_by_user ON requests (user, id);
CREATE TABLE IF NOT EXISTS calendars (
    user TEXT PRIMARY KEY REFERENCES users(user),
    ics BLOB NOT NULL,
    updated_at TEXT NOT NULL
);
"""


class ServiceStore(AccountTables, SettingsTables, DeliveryTables, ActivityTables, SQLiteFile):
    """The service's SQLite store.

    Parameters
    ----------
    path : str or Path
        Created with its tables when absent.
    timeout : float, default=30.0
        Seconds a write waits for another writer before the store is reported busy.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> store.counts()
    {'users': 2, 'requests': 0, 'answers': 0}
    """

    kind = "service store"
    rows_by_name = True

    def _create(self) -> None:
        """Create the schema in a new file, or bring an older store up to date, in one
        transaction; a store written by a newer version is refused."""
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            tables = connection.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'requests'"
            ).fetchone()[0]
            if version > SCHEMA_VERSION:
                raise MeetingError(
                    f"{self.path} was written by a newer version (store schema {version}; this "
                    f"version reads up to {SCHEMA_VERSION})"
                )
            if not tables:
                for statement in [*_SCHEMA.split(";"), *_LATER_TABLES]:
                    if statement.strip():
                        connection.execute(statement)
            else:
                for step in range(max(version, 1) + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[step]:
                        connection.execute(statement)
            connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    # ------------------------------------------------------------------ requests
    def find_request(self, user: str, uid: str, recurrence_id: str, sequence: int) -> dict | None:
        """The stored record of this invitation of ``user``, if any.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> _ = store.add_request("ann", toy.request_record("m1@example.org"))
        >>> store.find_request("ann", "m1@example.org", "", 0)["summary"]
        'Planning'
        >>> store.find_request("bob", "m1@example.org", "", 0) is None  # not bob's
        True
        """
        row = self._one(
            "SELECT * FROM requests WHERE user = ? AND uid = ? AND recurrence_id = ? "
            "AND sequence = ?",
            (user, uid, recurrence_id, sequence),
        )
        return request_dict(row)

    def add_request(
        self, user: str, record: dict[str, Any], reply: OutgoingReply | None = None
    ) -> tuple[dict, bool]:
        """Store a decided invitation; ``(record, created)`` — an existing one is returned.

        ``record["partstat"]`` is what the organiser should hear (None: nothing yet);
        ``reply``, a REPLY to mail, goes into the outbox in the same transaction, so an
        answer is either stored with its reply owed or not stored at all.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> first, created = store.add_request("ann", toy.request_record())
        >>> again, created_again = store.add_request("ann", toy.request_record())
        >>> created, created_again, first["id"] == again["id"], first["features"]
        (True, False, True, {'hour': '10'})
        """
        columns = (
            "uid",
            "recurrence_id",
            "sequence",
            "ics",
            "summary",
            "organizer",
            "starts_at",
            "features",
            "missing",
            "decision",
            "p_accept",
            "loss_accept",
            "loss_decline",
            "reasons",
            "notes",
            "partstat",
            "channel",
        )
        record = {"notes": [], "partstat": None, "channel": "api", **record}
        values = [
            json.dumps(record[c]) if c in ("features", "missing", "reasons", "notes") else record[c]
            for c in columns
        ]
        with self._transaction() as connection:
            existing = connection.execute(
                "SELECT * FROM requests WHERE user = ? AND uid = ? AND recurrence_id = ? "
                "AND sequence = ?",
                (user, record["uid"], record["recurrence_id"], record["sequence"]),
            ).fetchone()
            if existing is not None:
                return request_dict(existing), False
            cursor = connection.execute(
                f"INSERT INTO requests (user, received_at, {', '.join(columns)}) "
                f"VALUES (?, ?, {', '.join('?' for _ in columns)})",
                (user, utc_now(), *values),
            )
            if reply is not None:
                self._queue(connection, user, cursor.lastrowid, reply)
            self._note(connection, user, cursor.lastrowid, ACTIONS.get(record["decision"]))
            row = connection.execute(
                "SELECT * FROM requests WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
        return request_dict(row), True

    def requests(self, user: str) -> list[dict]:
        """``user``'s requests, newest first.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> for uid in ("m1", "m2"):
        ...     _ = store.add_request("ann", toy.request_record(uid))
        >>> [r["uid"] for r in store.requests("ann")], store.requests("bob")
        (['m2', 'm1'], [])
        """
        rows = self._all(
            "SELECT * FROM requests WHERE user = ? AND origin = 'invitation' "
            "AND state != 'cancelled' ORDER BY id DESC",
            (user,),
        )
        return [request_dict(row) for row in rows]

    def request(self, user: str, request_id: int) -> dict | None:
        """One of ``user``'s requests (None for another user's or an unknown id).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record())
        >>> store.request("ann", record["id"])["uid"], store.request("bob", record["id"])
        ('m1@example.org', None)
        """
        row = self._one("SELECT * FROM requests WHERE user = ? AND id = ?", (user, request_id))
        return request_dict(row)

    def answer(self, user: str, request_id: int, accepted: bool) -> dict | None:
        """Record the person's answer to one of their requests (None: not theirs). It is
        also what the organiser should now hear (``partstat``): the next pass writes it to
        the calendar and mails it, whether it answers a question or corrects the assistant.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record())
        >>> store.answer("ann", record["id"], accepted=False)["answer"]
        'decline'
        >>> store.answer("bob", record["id"], accepted=True) is None
        True
        """
        with self._transaction() as connection:
            changed = connection.execute(
                "UPDATE requests SET answer = ?, answered_at = ?, partstat = ? WHERE user = ? "
                "AND id = ? AND origin = 'invitation'",
                (
                    "accept" if accepted else "decline",
                    utc_now(),
                    "ACCEPTED" if accepted else "DECLINED",
                    user,
                    request_id,
                ),
            ).rowcount
            self._note(connection, user, request_id, "answered")
        return self.request(user, request_id) if changed else None

    def cancel(self, user: str, uid: str, recurrence_id: str | None = None) -> int:
        """Close ``user``'s pending questions about a meeting its organiser cancelled: the
        unanswered invitations of that UID (one instance, or every one when
        ``recurrence_id`` is None) are marked cancelled (kept, so that the invitation is never
        asked again, but no longer listed) and their unsent replies dropped. Answered ones
        stay (they are learning data). Returns how many were closed.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> _ = store.add_request("ann", toy.request_record("m1@example.org"))
        >>> store.cancel("bob", "m1@example.org"), store.cancel("ann", "m1@example.org")
        (0, 1)
        >>> store.requests("ann")
        []
        """
        query = (
            "UPDATE requests SET state = 'cancelled' WHERE user = ? AND uid = ? "
            "AND answer IS NULL AND origin = 'invitation' AND state = 'open'"
        )
        values: tuple[str, ...] = (user, uid)
        if recurrence_id is not None:
            query += " AND recurrence_id = ?"
            values += (recurrence_id,)
        with self._transaction() as connection:
            closed = connection.execute(query, values).rowcount
            self._drop_owed(connection, user, "state = 'cancelled'")
            return closed

    def import_history(self, rows: list[tuple[str, dict[str, str], bool]]) -> int:
        """Store earlier answers ``(user, features, accepted)`` as learning data (one
        transaction; rows of origin "history", never listed as requests). Returns how many.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.import_history([("ann", {"hour": "9"}, True), ("bob", {"hour": "17"}, False)])
        2
        >>> store.requests("ann"), [r["answer"] for r in store.answered()]
        ([], ['accept', 'decline'])
        """
        stamp = utc_now()
        with self._transaction() as connection:
            start = connection.execute(
                "SELECT count(*) FROM requests WHERE origin = 'history'"
            ).fetchone()[0]
            connection.executemany(
                "INSERT INTO requests (user, uid, sequence, received_at, ics, summary, "
                "organizer, starts_at, features, missing, decision, reasons, answer, "
                "answered_at, origin) VALUES (?, ?, 0, ?, x'', '', '', '', ?, '[]', ?, '[]', "
                "?, ?, 'history')",
                [
                    (
                        user,
                        f"history-{start + i}",
                        stamp,
                        json.dumps(features),
                        "accept" if accepted else "decline",
                        "accept" if accepted else "decline",
                        stamp,
                    )
                    for i, (user, features, accepted) in enumerate(rows)
                ],
            )
        return len(rows)

    def answered(self) -> list[dict]:
        """Every answered request (the learning data), oldest first.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record())
        >>> _ = store.answer("ann", record["id"], accepted=True)
        >>> [(r["user"], r["answer"]) for r in store.answered()]
        [('ann', 'accept')]
        """
        rows = self._all("SELECT * FROM requests WHERE answer IS NOT NULL ORDER BY answered_at, id")
        return [request_dict(row) for row in rows]

    def counts(self) -> dict[str, int]:
        """Users (not revoked), requests and answers in the store.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.revoke("bob")
        >>> _ = store.add_request("ann", toy.request_record())
        >>> store.counts()
        {'users': 1, 'requests': 1, 'answers': 0}
        """
        return {
            "users": self._one("SELECT count(*) FROM users WHERE revoked = 0")[0],
            "requests": self._one("SELECT count(*) FROM requests WHERE state != 'cancelled'")[0],
            "answers": self._one("SELECT count(*) FROM requests WHERE answer IS NOT NULL")[0],
        }

    def answers_of(self, user: str) -> int:
        """How many requests ``user`` has answered.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.import_history([("ann", {"hour": "9"}, True)])
        1
        >>> store.answers_of("ann"), store.answers_of("bob")
        (1, 0)
        """
        return self._one(
            "SELECT count(*) FROM requests WHERE user = ? AND answer IS NOT NULL", (user,)
        )[0]
