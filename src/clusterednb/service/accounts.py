"""Accounts and browser sessions of the service's store: tokens kept only as salted hashes.

:class:`AccountTables` is the part of :class:`~clusterednb.service.store.ServiceStore` that
reads and writes the ``users`` and ``sessions`` tables. An API token (``USER.SECRET``) is
shown once, when the account is made, and stored as a salted scrypt hash; a browser session
id is stored as its SHA-256 hash beside its CSRF token and expiry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass, replace
from typing import Any

from clusterednb.meeting.errors import MeetingError

SESSION_HOURS = 12
TOKEN_TABLES = [
    """CREATE TABLE IF NOT EXISTS tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL REFERENCES users(user),
    name TEXT NOT NULL,
    token_salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)""",
]
"""Personal API tokens a person makes and revokes on the page (``USER.pID.SECRET``)."""
SESSION_TABLES = [
    """CREATE TABLE IF NOT EXISTS sessions (
    session_hash BLOB PRIMARY KEY,
    user TEXT NOT NULL REFERENCES users(user),
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
)""",
    "ALTER TABLE sessions ADD COLUMN admin INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE sessions ADD COLUMN via TEXT NOT NULL DEFAULT 'token'",
]
"""Browser sessions (stored hashed, each with its CSRF token); how one was opened (``token``
or ``oidc``) and whether the organisation's identity provider named the person an
administrator for it (its admin group) came with store schema 6."""


def utc_now() -> str:
    """The current time in UTC as ISO 8601 text (the store's timestamps sort as text).

    Examples
    --------
    >>> utc_now().endswith("+00:00")
    True
    """
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
    admin : bool
        An administrator: sees every person's assistant on ``/admin`` and their records.

    Examples
    --------
    >>> Account("ann", "ann@example.org", 1.0, 5.0).revoked
    False
    """

    user: str
    email: str
    cost_false_accept: float
    cost_false_decline: float
    revoked: bool = False
    admin: bool = False

    @classmethod
    def of_row(cls, row: Any) -> Account:
        """The account of a ``users`` row."""
        return cls(
            row["user"],
            row["email"],
            row["cost_false_accept"],
            row["cost_false_decline"],
            bool(row["revoked"]),
            bool(row["admin"]),
        )


class AccountTables:
    """Accounts and sessions; the host is a :class:`~clusterednb.meeting.sqlite_file.SQLiteFile`
    whose schema has the ``users`` and ``sessions`` tables.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, token = toy.service_store()
    >>> account = store.authenticate(token)
    >>> account.user, account.cost_false_decline
    ('ann', 5.0)
    """

    def add_user(
        self,
        user: str,
        email: str,
        *,
        cost_false_accept: float = 1.0,
        cost_false_decline: float = 1.0,
        admin: bool = False,
    ) -> str:
        """Create an account (or give a revoked one a new token); return its API token.
        ``admin``: the person administers the service (``/admin``).

        The token is printed once and stored only as a salted scrypt hash.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.add_user("cy", "Cy@Example.org").startswith("cy.")
        True
        >>> store.add_user("cy", "cy@example.org")
        Traceback (most recent call last):
        ...
        clusterednb.meeting.errors.MeetingError: user 'cy' exists; revoke the account first
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
                "revoked, cost_false_accept, cost_false_decline, admin) "
                "VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)",
                (
                    user,
                    email.lower(),
                    salt,
                    _hash_token(token, salt),
                    utc_now(),
                    cost_false_accept,
                    cost_false_decline,
                    int(admin),
                ),
            )
        return f"{user}.{token}"

    def revoke(self, user: str) -> None:
        """Revoke a user's token (and end their browser sessions).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, token = toy.service_store()
        >>> store.revoke("ann")
        >>> store.authenticate(token) is None
        True
        """
        with self._transaction() as connection:
            changed = connection.execute(
                "UPDATE users SET revoked = 1 WHERE user = ?", (user,)
            ).rowcount
            connection.execute("DELETE FROM sessions WHERE user = ?", (user,))
        if not changed:
            raise MeetingError(f"no user {user!r} in {self.path}")

    def users(self) -> list[Account]:
        """Every account, by user id.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.revoke("bob")
        >>> [(account.user, account.revoked) for account in store.users()]
        [('ann', False), ('bob', True)]
        """
        return [Account.of_row(row) for row in self._all("SELECT * FROM users ORDER BY user")]

    def has_user(self, user: str) -> bool:
        """Whether ``user`` has an account (revoked or not).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.has_user("ann"), store.has_user("zoe")
        (True, False)
        """
        return self._one("SELECT 1 FROM users WHERE user = ?", (user,)) is not None

    def authenticate(self, token: str) -> Account | None:
        """The account of a valid, unrevoked token (``USER.SECRET``, or a personal token
        ``USER.pID.SECRET``), else None.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, token = toy.service_store()
        >>> store.authenticate(token).email
        'ann@example.org'
        >>> store.authenticate("ann.not-her-secret") is None
        True
        """
        user, _, secret = token.partition(".")
        row = self._one("SELECT * FROM users WHERE user = ?", (user,))
        if row is None or row["revoked"] or not secret:
            return None
        personal, _, personal_secret = secret.partition(".")
        if personal_secret and personal[:1] == "p" and personal[1:].isdigit():
            own = self._one(
                "SELECT token_salt, token_hash FROM tokens WHERE id = ? AND user = ? "
                "AND revoked_at IS NULL",
                (int(personal[1:]), user),
            )
            if own is None:
                return None
            salt, expected, secret = own["token_salt"], own["token_hash"], personal_secret
        else:
            salt, expected = row["token_salt"], row["token_hash"]
        if not hmac.compare_digest(_hash_token(secret, salt), expected):
            return None
        return Account.of_row(row)

    def add_token(self, user: str, name: str) -> str:
        """A new personal API token of ``user``, named ``name`` (for scripts); shown once.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> token = store.add_token("ann", "calendar script")
        >>> token.startswith("ann.p"), store.authenticate(token).user
        (True, 'ann')
        >>> store.revoke_token("ann", store.tokens("ann")[0]["id"])
        True
        >>> store.authenticate(token) is None
        True
        """
        name = " ".join(name.split())[:100]
        if not name:
            raise MeetingError("a token needs a name (what it is for)")
        secret, salt = secrets.token_urlsafe(32), secrets.token_bytes(16)
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO tokens (user, name, token_salt, token_hash, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (user, name, salt, _hash_token(secret, salt), utc_now()),
            )
        return f"{user}.p{cursor.lastrowid}.{secret}"

    def tokens(self, user: str) -> list[dict[str, Any]]:
        """``user``'s personal tokens (never their secrets), newest first."""
        rows = self._all(
            "SELECT id, name, created_at, revoked_at FROM tokens WHERE user = ? ORDER BY id DESC",
            (user,),
        )
        return [dict(row) for row in rows]

    def revoke_token(self, user: str, token_id: int) -> bool:
        """Revoke one of ``user``'s personal tokens; False when it is not theirs (or gone)."""
        with self._transaction() as connection:
            return bool(
                connection.execute(
                    "UPDATE tokens SET revoked_at = ? WHERE id = ? AND user = ? "
                    "AND revoked_at IS NULL",
                    (utc_now(), token_id, user),
                ).rowcount
            )

    def open_session(
        self, user: str, *, admin: bool = False, via: str = "token"
    ) -> tuple[str, str]:
        """A new browser session of ``user``: ``(session id, CSRF token)``. ``via``: how the
        person signed in (``token`` or ``oidc``); ``admin``: the identity provider put them in
        the administrators' group (for this session only).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> session, csrf = store.open_session("ann")
        >>> store.session(session)[1] == csrf, store.session(session)[0].admin
        (True, False)
        >>> session, _ = store.open_session("ann", admin=True, via="oidc")
        >>> store.session(session)[0].admin
        True
        """
        session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        expires = dt.datetime.now(dt.UTC) + dt.timedelta(hours=SESSION_HOURS)
        with self._transaction() as connection:
            connection.execute(
                "INSERT INTO sessions (session_hash, user, csrf, expires_at, admin, via) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (_session_key(session), user, csrf, expires.isoformat(), int(admin), via),
            )
        return session, csrf

    def session(self, session: str) -> tuple[Account, str] | None:
        """The account and CSRF token of a live session, else None.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> session, _ = store.open_session("ann")
        >>> store.session(session)[0].user, store.session("made-up") is None
        ('ann', True)
        """
        row = self._one(
            "SELECT s.csrf, s.expires_at, s.admin AS session_admin, u.* FROM sessions s "
            "JOIN users u USING (user) WHERE s.session_hash = ?",
            (_session_key(session),),
        )
        if row is None or row["revoked"] or row["expires_at"] < utc_now():
            return None
        account = Account.of_row(row)
        if row["session_admin"] and not account.admin:
            account = replace(account, admin=True)
        return account, row["csrf"]

    def close_session(self, session: str) -> str | None:
        """End a browser session; return how it was opened (``token``, ``oidc``), None when
        there was none.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> session, _ = store.open_session("ann", via="oidc")
        >>> store.close_session(session), store.close_session(session)
        ('oidc', None)
        >>> store.session(session) is None
        True
        """
        with self._transaction() as connection:
            row = connection.execute(
                "DELETE FROM sessions WHERE session_hash = ? RETURNING via",
                (_session_key(session),),
            ).fetchone()
        return None if row is None else row[0]

    def user_with_email(self, email: str) -> Account | None:
        """The live account whose address is ``email`` (compared without case), else None;
        two live accounts with one address are refused rather than guessed between.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.user_with_email("ANN@example.org").user, store.user_with_email("x@y.z")
        ('ann', None)
        """
        rows = self._all(
            "SELECT * FROM users WHERE lower(email) = lower(?) AND NOT revoked", (email,)
        )
        if len(rows) > 1:
            names = ", ".join(sorted(row["user"] for row in rows))
            raise MeetingError(f"{email} is the address of more than one person ({names})")
        return Account.of_row(rows[0]) if rows else None


def _session_key(session: str) -> bytes:
    """What the store keeps of a session id: its SHA-256 hash."""
    return hashlib.sha256(session.encode()).digest()
