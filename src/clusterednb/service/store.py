"""The service's store: one SQLite file (WAL), one transaction per write, one schema.

Tables: ``users`` (accounts; a token is kept only as a salted scrypt hash), ``requests``
(every invitation received, its features, the decision and, once given, the person's
answer; rows of ``origin = 'history'`` are earlier answers imported as learning data, never
shown as requests), ``calendars`` (each user's calendar) and ``sessions`` (browser sessions, stored
hashed, each with its CSRF token). The same (user, UID, RECURRENCE-ID, SEQUENCE) is stored
once: posting it again returns the stored record. Every read and write of a request names
its user, so one user's rows are never returned to another.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.sqlite_file import SQLiteFile

SCHEMA_VERSION = 2
MIGRATIONS = {
    2: ["ALTER TABLE requests ADD COLUMN origin TEXT NOT NULL DEFAULT 'invitation'"],
}
"""Statements that bring a store of version ``v - 1`` to version ``v``."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    user TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    token_salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    cost_false_accept REAL NOT NULL DEFAULT 1.0,
    cost_false_decline REAL NOT NULL DEFAULT 1.0
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
    UNIQUE (user, uid, recurrence_id, sequence)
);
CREATE INDEX IF NOT EXISTS requests_by_user ON requests (user, id);
CREATE TABLE IF NOT EXISTS calendars (
    user TEXT PRIMARY KEY REFERENCES users(user),
    ics BLOB NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    session_hash BLOB PRIMARY KEY,
    user TEXT NOT NULL REFERENCES users(user),
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
"""
SESSION_HOURS = 12


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def _hash_token(token: str, salt: bytes) -> bytes:
    return hashlib.scrypt(token.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)


@dataclass(frozen=True)
class Account:
    """One user of the service.

    Attributes
    ----------
    user : str
    email : str
    cost_false_accept, cost_false_decline : float
        The user's costs of a wrong accept and a wrong decline.
    revoked : bool
    """

    user: str
    email: str
    cost_false_accept: float
    cost_false_decline: float
    revoked: bool = False


class ServiceStore(SQLiteFile):
    """The service's SQLite store.

    Parameters
    ----------
    path : str or Path
        Created with its tables when absent.
    timeout : float, default=30.0
        Seconds a write waits for another writer before the store is reported busy.
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
                for statement in _SCHEMA.split(";"):
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

    # ------------------------------------------------------------------ accounts
    def add_user(
        self,
        user: str,
        email: str,
        *,
        cost_false_accept: float = 1.0,
        cost_false_decline: float = 1.0,
    ) -> str:
        """Create an account (or give a revoked one a new token); return its API token.

        The token is printed once and stored only as a salted scrypt hash.
        """
        if not user or not email or "@" not in email:
            raise MeetingError(f"a user needs an id and an email address, got {user!r}, {email!r}")
        token = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        with self._transaction() as connection:
            existing = connection.execute(
                "SELECT revoked FROM users WHERE user = ?", (user,)
            ).fetchone()
            if existing is not None and not existing["revoked"]:
                raise MeetingError(f"user {user!r} exists; revoke the account first")
            connection.execute(
                "INSERT OR REPLACE INTO users (user, email, token_salt, token_hash, created_at, "
                "revoked, cost_false_accept, cost_false_decline) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
                (
                    user,
                    email.lower(),
                    salt,
                    _hash_token(token, salt),
                    _now(),
                    cost_false_accept,
                    cost_false_decline,
                ),
            )
        return f"{user}.{token}"

    def revoke(self, user: str) -> None:
        """Revoke a user's token (and end their browser sessions)."""
        with self._transaction() as connection:
            changed = connection.execute(
                "UPDATE users SET revoked = 1 WHERE user = ?", (user,)
            ).rowcount
            connection.execute("DELETE FROM sessions WHERE user = ?", (user,))
        if not changed:
            raise MeetingError(f"no user {user!r} in {self.path}")

    def users(self) -> list[Account]:
        """Every account."""
        rows = self._all(
            "SELECT user, email, cost_false_accept, cost_false_decline, revoked FROM users "
            "ORDER BY user"
        )
        return [Account(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]

    def authenticate(self, token: str) -> Account | None:
        """The account of a valid, unrevoked token (``USER.SECRET``), else None."""
        user, _, secret = token.partition(".")
        row = self._one("SELECT * FROM users WHERE user = ?", (user,))
        if row is None or row["revoked"] or not secret:
            return None
        if not hmac.compare_digest(_hash_token(secret, row["token_salt"]), row["token_hash"]):
            return None
        return Account(
            row["user"], row["email"], row["cost_false_accept"], row["cost_false_decline"]
        )

    # ------------------------------------------------------------------ sessions
    def open_session(self, user: str) -> tuple[str, str]:
        """A new browser session of ``user``: ``(session id, CSRF token)``."""
        session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        expires = dt.datetime.now(dt.UTC) + dt.timedelta(hours=SESSION_HOURS)
        with self._transaction() as connection:
            connection.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?)",
                (hashlib.sha256(session.encode()).digest(), user, csrf, expires.isoformat()),
            )
        return session, csrf

    def session(self, session: str) -> tuple[Account, str] | None:
        """The account and CSRF token of a live session, else None."""
        row = self._one(
            "SELECT s.csrf, s.expires_at, u.* FROM sessions s JOIN users u USING (user) "
            "WHERE s.session_hash = ?",
            (hashlib.sha256(session.encode()).digest(),),
        )
        if row is None or row["revoked"] or row["expires_at"] < _now():
            return None
        account = Account(
            row["user"], row["email"], row["cost_false_accept"], row["cost_false_decline"]
        )
        return account, row["csrf"]

    def close_session(self, session: str) -> None:
        """End a browser session."""
        with self._transaction() as connection:
            connection.execute(
                "DELETE FROM sessions WHERE session_hash = ?",
                (hashlib.sha256(session.encode()).digest(),),
            )

    # ------------------------------------------------------------------ requests
    def find_request(self, user: str, uid: str, recurrence_id: str, sequence: int) -> dict | None:
        """The stored record of this invitation of ``user``, if any."""
        row = self._one(
            "SELECT * FROM requests WHERE user = ? AND uid = ? AND recurrence_id = ? "
            "AND sequence = ?",
            (user, uid, recurrence_id, sequence),
        )
        return _record(row)

    def add_request(self, user: str, record: dict[str, Any]) -> tuple[dict, bool]:
        """Store a decided invitation; ``(record, created)`` — an existing one is returned."""
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
        )
        values = [
            json.dumps(record[c]) if c in ("features", "missing", "reasons") else record[c]
            for c in columns
        ]
        with self._transaction() as connection:
            existing = connection.execute(
                "SELECT * FROM requests WHERE user = ? AND uid = ? AND recurrence_id = ? "
                "AND sequence = ?",
                (user, record["uid"], record["recurrence_id"], record["sequence"]),
            ).fetchone()
            if existing is not None:
                return _record(existing), False
            cursor = connection.execute(
                f"INSERT INTO requests (user, received_at, {', '.join(columns)}) "
                f"VALUES (?, ?, {', '.join('?' for _ in columns)})",
                (user, _now(), *values),
            )
            row = connection.execute(
                "SELECT * FROM requests WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
        return _record(row), True

    def requests(self, user: str) -> list[dict]:
        """``user``'s requests, newest first."""
        rows = self._all(
            "SELECT * FROM requests WHERE user = ? AND origin = 'invitation' ORDER BY id DESC",
            (user,),
        )
        return [_record(row) for row in rows]

    def request(self, user: str, request_id: int) -> dict | None:
        """One of ``user``'s requests (None for another user's or an unknown id)."""
        row = self._one("SELECT * FROM requests WHERE user = ? AND id = ?", (user, request_id))
        return _record(row)

    def answer(self, user: str, request_id: int, accepted: bool) -> dict | None:
        """Record the person's answer to one of their requests (None: not theirs)."""
        with self._transaction() as connection:
            changed = connection.execute(
                "UPDATE requests SET answer = ?, answered_at = ? WHERE user = ? AND id = ? "
                "AND origin = 'invitation'",
                ("accept" if accepted else "decline", _now(), user, request_id),
            ).rowcount
        return self.request(user, request_id) if changed else None

    def import_history(self, rows: list[tuple[str, dict[str, str], bool]]) -> int:
        """Store earlier answers ``(user, features, accepted)`` as learning data (one
        transaction; rows of origin "history", never listed as requests). Returns how many."""
        stamp = _now()
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
        """Every answered request (the learning data), oldest first."""
        rows = self._all("SELECT * FROM requests WHERE answer IS NOT NULL ORDER BY answered_at, id")
        return [_record(row) for row in rows]

    def counts(self) -> dict[str, int]:
        """Users, requests and answers in the store."""
        return {
            "users": self._one("SELECT count(*) FROM users WHERE revoked = 0")[0],
            "requests": self._one("SELECT count(*) FROM requests")[0],
            "answers": self._one("SELECT count(*) FROM requests WHERE answer IS NOT NULL")[0],
        }

    def answers_of(self, user: str) -> int:
        """How many requests ``user`` has answered."""
        return self._one(
            "SELECT count(*) FROM requests WHERE user = ? AND answer IS NOT NULL", (user,)
        )[0]

    # ------------------------------------------------------------------ calendars
    def set_calendar(self, user: str, ics: bytes) -> None:
        """Store ``user``'s calendar (replacing the previous one)."""
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO calendars VALUES (?, ?, ?)", (user, ics, _now())
            )

    def calendar(self, user: str) -> bytes | None:
        """``user``'s stored calendar, if any."""
        row = self._one("SELECT ics FROM calendars WHERE user = ?", (user,))
        return None if row is None else bytes(row["ics"])


def _record(row: sqlite3.Row | None) -> dict | None:
    if row is None:
        return None
    record = dict(row)
    for name in ("features", "missing", "reasons"):
        record[name] = json.loads(record[name])
    return record
