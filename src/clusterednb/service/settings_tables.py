"""Each person's rules (:class:`~clusterednb.meeting.rules.PersonRules`), calendar account and
mailbox in the service's store.

A calendar account's password (or a mailbox's password or OAuth token) is a secret the service
needs in clear to log in to the server. It is kept in the store and nowhere else (never a
command line, a log or an API answer), and the store file is then made readable by its owner
only: writing an account sets the file's mode to ``0600``, and :func:`check_private` refuses
a store that other accounts of the machine could read (as ssh refuses a private key others
can read).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clusterednb.meeting.errors import MeetingError
from clusterednb.service.accounts import utc_now
from clusterednb.service.passes.mail.imap import ImapAccount

if TYPE_CHECKING:  # the rules import pandas: only when a person's rules are read
    from clusterednb.meeting.rules import PersonRules


@dataclass(frozen=True)
class CalendarAccount:
    """A person's CalDAV account, as the background pass uses it.

    Examples
    --------
    >>> account = CalendarAccount("ann", "http://127.0.0.1:5232/ann/", "ann", "s3cret")
    >>> "s3cret" in repr(account)  # a secret is never printed
    False
    """

    user: str
    url: str
    username: str
    password: str
    ca_bundle: str | None = None

    def __repr__(self) -> str:
        return f"CalendarAccount(user={self.user!r}, url={self.url!r}, username={self.username!r})"

    def public(self) -> dict[str, str | None]:
        """What may be shown of it: everything but the password.

        Examples
        --------
        >>> CalendarAccount("ann", "https://dav.example.org/", "ann", "s3cret").public()
        {'url': 'https://dav.example.org/', 'username': 'ann', 'ca_bundle': None}
        """
        return {"url": self.url, "username": self.username, "ca_bundle": self.ca_bundle}


def check_private(path: str | Path) -> None:
    """Refuse a store file (or its WAL companions) that other accounts may read or write.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> path = toy.scratch_file("open.db")
    >>> _ = path.write_bytes(b"")
    >>> path.chmod(0o644)
    >>> check_private(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: .../open.db holds passwords but other accounts may ...
    >>> path.chmod(0o600)
    >>> check_private(path)
    """
    for name in (str(path), f"{path}-wal", f"{path}-shm"):
        if not os.path.exists(name):
            continue
        mode = stat.S_IMODE(os.stat(name).st_mode)
        if mode & 0o077:
            raise MeetingError(
                f"{name} holds passwords but other accounts may read it (mode {mode:o}); "
                f"run: chmod 600 {name}"
            )


def make_private(path: str | Path) -> None:
    """Set the store file and its WAL companions to mode ``0600``."""
    for name in (str(path), f"{path}-wal", f"{path}-shm"):
        if os.path.exists(name):
            os.chmod(name, 0o600)


class SettingsTables:
    """Rules, stored calendars and calendar accounts; the host is a
    :class:`~clusterednb.meeting.sqlite_file.SQLiteFile` whose schema has the ``settings``,
    ``calendars`` and ``calendar_accounts`` tables.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> store.rules("ann").time_zone  # nothing set: the defaults
    'UTC'
    >>> from clusterednb.meeting.rules import PersonRules
    >>> _ = store.set_rules("ann", PersonRules(working_hours=("09:00", "17:00")))
    >>> store.rules("ann").working_hours, store.rules("bob").working_hours
    (('09:00', '17:00'), None)
    """

    def rules(self, user: str, default_zone: str = "UTC") -> PersonRules:
        """``user``'s rules (the defaults, in ``default_zone``, when none are set)."""
        from clusterednb.meeting.rules import PersonRules

        row = self._one("SELECT rules FROM settings WHERE user = ?", (user,))
        if row is None:
            return PersonRules(time_zone=default_zone)
        return PersonRules.from_dict(json.loads(row["rules"]))

    def set_rules(self, user: str, rules: PersonRules) -> PersonRules:
        """Store ``user``'s rules; returns them."""
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO settings VALUES (?, ?, ?)",
                (user, json.dumps(rules.to_dict()), utc_now()),
            )
        return rules

    def set_calendar_account(self, account: CalendarAccount) -> None:
        """Register (or replace) a person's CalDAV account; the store becomes private.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.set_calendar_account(CalendarAccount("ann", "http://h/ann/", "ann", "pw"))
        >>> [a.user for a in store.calendar_accounts()], oct(store.path.stat().st_mode)[-3:]
        (['ann'], '600')
        """
        if self._one("SELECT user FROM users WHERE user = ?", (account.user,)) is None:
            raise MeetingError(f"no user {account.user!r}; add them first (cnb users add)")
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO calendar_accounts VALUES (?, ?, ?, ?, ?, ?)",
                (
                    account.user,
                    account.url,
                    account.username,
                    account.password,
                    account.ca_bundle,
                    utc_now(),
                ),
            )
        make_private(self.path)

    def remove_calendar_account(self, user: str) -> bool:
        """Forget ``user``'s CalDAV account (and its password); whether there was one."""
        with self._transaction() as connection:
            cursor = connection.execute("DELETE FROM calendar_accounts WHERE user = ?", (user,))
        return cursor.rowcount > 0

    def set_mail_account(self, user: str, account: ImapAccount) -> None:
        """Register (or replace) ``user``'s mailbox; the store becomes private.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.set_mail_account("ann", ImapAccount("imap.example.org", 993, "ann", "pw"))
        >>> [(user, account.host) for user, account in store.mail_accounts()]
        [('ann', 'imap.example.org')]
        """
        if self._one("SELECT user FROM users WHERE user = ?", (user,)) is None:
            raise MeetingError(f"no user {user!r}; add them first (cnb users add)")
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO mail_accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    user,
                    account.host,
                    account.port,
                    account.username,
                    account.password,
                    account.token,
                    account.folder,
                    str(account.ca_bundle) if account.ca_bundle else None,
                    None if account.starttls is None else int(account.starttls),
                    utc_now(),
                ),
            )
        make_private(self.path)

    def remove_mail_account(self, user: str) -> bool:
        """Forget ``user``'s mailbox (and its secret); whether there was one."""
        with self._transaction() as connection:
            cursor = connection.execute("DELETE FROM mail_accounts WHERE user = ?", (user,))
        return cursor.rowcount > 0

    def mail_accounts(self) -> list[tuple[str, ImapAccount]]:
        """Every registered mailbox: ``(user, account)``, by user."""
        rows = self._all("SELECT * FROM mail_accounts ORDER BY user", ())
        return [
            (
                row["user"],
                ImapAccount(
                    row["host"],
                    row["port"],
                    row["username"],
                    password=row["password"],
                    token=row["token"],
                    folder=row["folder"],
                    ca_bundle=Path(row["ca_bundle"]) if row["ca_bundle"] else None,
                    starttls=None if row["starttls"] is None else bool(row["starttls"]),
                ),
            )
            for row in rows
        ]

    def calendar_account(self, user: str) -> CalendarAccount | None:
        """``user``'s CalDAV account, if registered."""
        found = [account for account in self.calendar_accounts() if account.user == user]
        return found[0] if found else None

    def calendar_accounts(self) -> list[CalendarAccount]:
        """Every registered CalDAV account, by user."""
        rows = self._all(
            "SELECT user, url, username, password, ca_bundle FROM calendar_accounts ORDER BY user",
            (),
        )
        return [CalendarAccount(**dict(row)) for row in rows]

    # ------------------------------------------------------------------ calendars
    def set_calendar(self, user: str, ics: bytes) -> None:
        """Store ``user``'s calendar (replacing the previous one).

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.set_calendar("ann", b"first")
        >>> store.set_calendar("ann", b"second")
        >>> store.calendar("ann")
        b'second'
        """
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO calendars VALUES (?, ?, ?)", (user, ics, utc_now())
            )

    def calendar(self, user: str) -> bytes | None:
        """``user``'s stored calendar, if any.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.calendar("bob") is None
        True
        """
        row = self._one("SELECT ics FROM calendars WHERE user = ?", (user,))
        return None if row is None else bytes(row["ics"])
