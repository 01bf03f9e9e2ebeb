"""What the assistant owes and has done on people's behalf, in the service's store: the outbox
of REPLYs to mail, the mailbox messages already dealt with, and each person's last passes.

The outbox is what makes a reply survive an SMTP outage or a crash: a REPLY is stored, with
its Message-ID, in the same transaction that records the decision (the mailbox pass) or the
PARTSTAT written on the calendar server (the CalDAV pass), and is sent afterwards; a pass that
finds it unsent (the server refused it, the process died) sends it again, byte for byte, with
the same Message-ID, until the SMTP server accepts it. A permanent refusal (a 5xx reply) is
kept as ``failed`` with the server's words, never retried, and shown.

Tables: ``outbox`` (one row a REPLY: ``owed``, ``sent``, ``failed`` or ``dropped`` when the
invitation was cancelled or updated before it went), ``mail_seen`` (the messages of a folder
dealt with, by UIDVALIDITY and UID, so that a server that keeps no keywords is not read twice)
and ``pass_status`` (each person's last calendar and mailbox pass: when, what, the error).
"""

from __future__ import annotations

import email.policy
import json
import sqlite3
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from clusterednb.service.accounts import utc_now

DELIVERY_TABLES = [
    """CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    request_id INTEGER NOT NULL,
    partstat TEXT NOT NULL,
    message_id TEXT NOT NULL UNIQUE,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    message BLOB NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    state TEXT NOT NULL DEFAULT 'owed',
    sent_at TEXT
)""",
    "CREATE INDEX IF NOT EXISTS outbox_by_user ON outbox (user, state)",
    """CREATE TABLE IF NOT EXISTS mail_seen (
    user TEXT NOT NULL,
    folder TEXT NOT NULL,
    validity INTEGER NOT NULL,
    uid INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (user, folder, validity, uid)
)""",
    """CREATE TABLE IF NOT EXISTS pass_status (
    user TEXT NOT NULL,
    kind TEXT NOT NULL,
    server TEXT NOT NULL,
    last_at TEXT NOT NULL,
    ok INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    last_error TEXT,
    failing_since TEXT,
    passes INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user, kind)
)""",
]
"""The tables of this module (created with the store, or by its migration to version 4)."""


@dataclass(frozen=True)
class OutgoingReply:
    """A REPLY ready to mail: the message as bytes and who it goes from and to.

    Examples
    --------
    >>> from email.message import EmailMessage
    >>> message = EmailMessage()
    >>> message["Message-ID"], message["From"], message["To"] = "<r1@x>", "a@x", "b@x"
    >>> reply = OutgoingReply.of(message, "ACCEPTED")
    >>> reply.message_id, reply.sender, reply.recipient
    ('<r1@x>', 'a@x', 'b@x')
    """

    partstat: str
    message_id: str
    sender: str
    recipient: str
    message: bytes

    @classmethod
    def of(cls, message: EmailMessage, partstat: str) -> OutgoingReply:
        """The reply carried by ``message`` (its Message-ID, From and To), kept as it goes on
        the wire (CRLF line ends: :meth:`smtplib.SMTP.sendmail` sends bytes as they are)."""
        return cls(
            partstat,
            str(message["Message-ID"]),
            str(message["From"]),
            str(message["To"]),
            message.as_bytes(policy=email.policy.SMTP),
        )


class DeliveryTables:
    """The outbox, the messages dealt with and the pass records of the service's store (a
    mixin of :class:`~clusterednb.service.store.ServiceStore`).

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> record, _ = store.add_request("ann", toy.request_record(), toy.outgoing_reply())
    >>> [(r["request_id"] == record["id"], r["state"]) for r in store.outbox("ann")]
    [(True, 'owed')]
    >>> store.request("ann", record["id"])["replied"]
    'ACCEPTED'
    """

    # ------------------------------------------------------------------ outbox
    def _queue(
        self, connection: sqlite3.Connection, user: str, request_id: int, reply: OutgoingReply
    ) -> None:
        """Put ``reply`` in the outbox and record it as what the organiser was told (inside
        the caller's transaction); an earlier reply to the same request not sent yet is
        dropped (it says what the organiser should no longer hear)."""
        connection.execute(
            "UPDATE outbox SET state = 'dropped' WHERE user = ? AND request_id = ? "
            "AND state = 'owed'",
            (user, request_id),
        )
        connection.execute(
            "INSERT INTO outbox (user, request_id, partstat, message_id, sender, recipient, "
            "message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                user,
                request_id,
                reply.partstat,
                reply.message_id,
                reply.sender,
                reply.recipient,
                reply.message,
                utc_now(),
            ),
        )
        connection.execute(
            "UPDATE requests SET replied = ? WHERE user = ? AND id = ?",
            (reply.partstat, user, request_id),
        )

    def _drop_owed(self, connection: sqlite3.Connection, user: str, condition: str) -> None:
        """Drop the unsent replies of ``user``'s requests that meet ``condition``."""
        connection.execute(
            "UPDATE outbox SET state = 'dropped' WHERE user = ? AND state = 'owed' AND "
            f"request_id IN (SELECT id FROM requests WHERE user = ? AND {condition})",
            (user, user),
        )

    def queue_reply(self, user: str, request_id: int, reply: OutgoingReply) -> None:
        """Put ``reply`` to one of ``user``'s requests in the outbox.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record())
        >>> store.queue_reply("ann", record["id"], toy.outgoing_reply("DECLINED"))
        >>> store.request("ann", record["id"])["replied"], len(store.outbox("ann"))
        ('DECLINED', 1)
        >>> store.queue_reply("ann", record["id"], toy.outgoing_reply("ACCEPTED"))  # changed
        >>> [(row["partstat"], row["state"]) for row in store.outbox("ann")]
        [('DECLINED', 'dropped'), ('ACCEPTED', 'owed')]
        """
        with self._transaction() as connection:
            self._queue(connection, user, request_id, reply)

    def mark_written(
        self, user: str, request_id: int, partstat: str, reply: OutgoingReply | None = None
    ) -> None:
        """Record that ``partstat`` is on the calendar server; with ``reply``, queue the REPLY
        that tells the organiser, in the same transaction.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record() | {"partstat": "ACCEPTED"})
        >>> store.mark_written("ann", record["id"], "ACCEPTED", toy.outgoing_reply())
        >>> stored = store.request("ann", record["id"])
        >>> stored["written"], stored["replied"], stored["last_error"]
        ('ACCEPTED', 'ACCEPTED', None)
        """
        with self._transaction() as connection:
            connection.execute(
                "UPDATE requests SET written = ?, last_error = NULL WHERE user = ? AND id = ?",
                (partstat, user, request_id),
            )
            if reply is not None:
                self._queue(connection, user, request_id, reply)
            self._note(connection, user, request_id, f"{partstat} written on the calendar")

    def _note_reply(self, connection: sqlite3.Connection, reply_id: int, action: str) -> None:
        """Record ``action`` on the request a reply of the outbox answers."""
        row = connection.execute(
            "SELECT user, request_id, partstat FROM outbox WHERE id = ?", (reply_id,)
        ).fetchone()
        if row is not None:
            self._note(connection, row[0], row[1], f"{action} ({row[2]})")

    def drop_owed_replies(self, user: str, request_id: int) -> None:
        """Drop the unsent replies to one of ``user``'s requests (the person answered it
        themselves, in their own client, which tells the organiser)."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE outbox SET state = 'dropped' WHERE user = ? AND request_id = ? "
                "AND state = 'owed'",
                (user, request_id),
            )

    def outbox(self, user: str, state: str | None = None) -> list[dict[str, Any]]:
        """``user``'s replies in the outbox (of one ``state``, or all), oldest first."""
        query = "SELECT * FROM outbox WHERE user = ?"
        values: tuple[str, ...] = (user,)
        if state is not None:
            query += " AND state = ?"
            values += (state,)
        return [dict(row) for row in self._all(query + " ORDER BY id", values)]

    def reply_sent(self, reply_id: int) -> None:
        """Record that the SMTP server accepted the reply ``reply_id``."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE outbox SET state = 'sent', sent_at = ?, attempts = attempts + 1, "
                "last_error = NULL WHERE id = ?",
                (utc_now(), reply_id),
            )
            self._note_reply(connection, reply_id, "reply sent to the organiser")

    def reply_refused(self, reply_id: int, error: str, permanent: bool) -> None:
        """Record a failed attempt (``permanent``: the server will never take it)."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?, state = ? WHERE id = ?",
                (error, "failed" if permanent else "owed", reply_id),
            )
            if permanent:
                self._note_reply(connection, reply_id, f"reply refused for good: {error}")

    # ------------------------------------------------------------------ requests' states
    def set_partstat(self, user: str, request_id: int, partstat: str | None) -> None:
        """Record what the organiser should hear about one of ``user``'s requests."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE requests SET partstat = ? WHERE user = ? AND id = ?",
                (partstat, user, request_id),
            )

    def note_error(self, user: str, request_id: int, error: str | None) -> None:
        """Keep the last error acting on one of ``user``'s requests (None: it went well)."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE requests SET last_error = ? WHERE user = ? AND id = ?",
                (error, user, request_id),
            )

    def supersede(self, user: str, uid: str, recurrence_id: str, sequence: int) -> int:
        """Close ``user``'s open records of earlier versions (lower SEQUENCE) of an invitation
        the organiser updated, and drop their unsent replies; how many were closed.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record(), toy.outgoing_reply())
        >>> store.supersede("ann", "m1@example.org", "", 1)
        1
        >>> store.request("ann", record["id"])["state"], store.outbox("ann")[0]["state"]
        ('superseded', 'dropped')
        """
        older = self._one(
            "SELECT count(*) FROM requests WHERE user = ? AND uid = ? AND recurrence_id = ? "
            "AND sequence < ? AND state = 'open' AND origin = 'invitation'",
            (user, uid, recurrence_id, sequence),
        )[0]
        if not older:  # the common case: read only, no write transaction
            return 0
        with self._transaction() as connection:
            closed = connection.execute(
                "UPDATE requests SET state = 'superseded' WHERE user = ? AND uid = ? AND "
                "recurrence_id = ? AND sequence < ? AND state = 'open' "
                "AND origin = 'invitation'",
                (user, uid, recurrence_id, sequence),
            ).rowcount
            if closed:
                self._drop_owed(connection, user, "state = 'superseded'")
        return closed

    def replies_owed_by_mail(self, user: str) -> list[dict[str, Any]]:
        """``user``'s open invitations read from a mailbox whose organiser has not yet been
        told what they should hear (a decision, an answer, a correction)."""
        rows = self._all(
            "SELECT * FROM requests WHERE user = ? AND channel = 'mail' AND state = 'open' "
            "AND partstat IS NOT NULL AND replied IS NOT partstat ORDER BY id",
            (user,),
        )
        return [request_dict(row) for row in rows]

    # ------------------------------------------------------------------ mailbox messages
    def seen_messages(self, user: str, folder: str, validity: int) -> set[int]:
        """The UIDs of ``folder`` (under its UIDVALIDITY) already dealt with for ``user``."""
        rows = self._all(
            "SELECT uid FROM mail_seen WHERE user = ? AND folder = ? AND validity = ?",
            (user, folder, validity),
        )
        return {int(row[0]) for row in rows}

    def mark_seen(self, user: str, folder: str, validity: int, uid: int) -> None:
        """Remember that message ``uid`` of ``folder`` was dealt with."""
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR IGNORE INTO mail_seen VALUES (?, ?, ?, ?, ?)",
                (user, folder, validity, uid, utc_now()),
            )

    # ------------------------------------------------------------------ passes
    def record_pass(self, user: str, kind: str, server: str, outcome: str, error: str | None):
        """Record a finished pass of ``user``'s ``kind`` ("calendar" or "mailbox") at
        ``server``: what it did, and ``error`` (one line) when it failed.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.record_pass("ann", "calendar", "dav", "", "the connection was refused")
        >>> store.record_pass("ann", "calendar", "dav", "", "the connection was refused")
        >>> (status,) = store.pass_statuses()
        >>> status["ok"], status["failures"], status["failing_since"] is not None
        (0, 2, True)
        >>> store.record_pass("ann", "calendar", "dav", "1 answered", None)
        >>> store.pass_statuses()[0]["ok"], store.pass_statuses()[0]["failing_since"]
        (1, None)
        """
        stamp = utc_now()
        with self._transaction() as connection:
            row = connection.execute(
                "SELECT failing_since FROM pass_status WHERE user = ? AND kind = ?", (user, kind)
            ).fetchone()
            since = None if error is None else (row[0] if row and row[0] else stamp)
            connection.execute(
                "INSERT INTO pass_status (user, kind, server, last_at, ok, outcome, last_error, "
                "failing_since, passes, failures) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?) "
                "ON CONFLICT (user, kind) DO UPDATE SET server = excluded.server, "
                "last_at = excluded.last_at, ok = excluded.ok, outcome = excluded.outcome, "
                "last_error = coalesce(excluded.last_error, pass_status.last_error), "
                "failing_since = excluded.failing_since, passes = pass_status.passes + 1, "
                "failures = pass_status.failures + excluded.failures",
                (user, kind, server, stamp, int(error is None), outcome, error, since,
                 int(error is not None)),
            )  # fmt: skip

    def pass_statuses(self, user: str | None = None) -> list[dict[str, Any]]:
        """The last pass of every person's calendar and mailbox (or of ``user``'s), with
        their owed replies and unwritten answers."""
        query = (
            "SELECT p.*, (SELECT count(*) FROM outbox o WHERE o.user = p.user "
            "AND o.state = 'owed') AS owed_replies, (SELECT count(*) FROM outbox o "
            "WHERE o.user = p.user AND o.state = 'failed') AS failed_replies, "
            "(SELECT count(*) FROM requests r WHERE r.user = p.user AND r.state = 'open' "
            "AND r.channel = 'caldav' AND r.partstat IS NOT NULL "
            "AND r.written IS NOT r.partstat) AS owed_writes FROM pass_status p"
        )
        values: tuple[str, ...] = ()
        if user is not None:
            query += " WHERE p.user = ?"
            values = (user,)
        return [dict(row) for row in self._all(query + " ORDER BY p.user, p.kind", values)]

    def problems(self, user: str) -> list[str]:
        """What is owed on ``user``'s behalf and why it has not gone, one line each: replies
        the SMTP server has not taken, answers the calendar server has not written.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> record, _ = store.add_request("ann", toy.request_record(), toy.outgoing_reply())
        >>> store.problems("ann")  # owed, but not tried yet
        []
        >>> store.reply_refused(store.outbox("ann")[0]["id"], "451 try later", permanent=False)
        >>> store.problems("ann")
        ['451 try later']
        """
        replies = self._all(
            "SELECT last_error FROM outbox WHERE user = ? AND state IN ('owed', 'failed') "
            "AND last_error IS NOT NULL ORDER BY id",
            (user,),
        )
        writes = self._all(
            "SELECT last_error FROM requests WHERE user = ? AND state = 'open' AND "
            "last_error IS NOT NULL AND partstat IS NOT NULL AND written IS NOT partstat "
            "ORDER BY id",
            (user,),
        )
        return [row[0] for row in [*replies, *writes]]

    def failing_passes(self) -> list[dict[str, Any]]:
        """The people whose last pass failed or left something owed, with the reason."""
        rows = self._all("SELECT * FROM pass_status WHERE ok = 0 ORDER BY user, kind")
        return [dict(row) for row in rows]

    def delivery_counts(self) -> dict[str, int]:
        """The outbox by state and the answers not yet written on a calendar server.

        Examples
        --------
        >>> from clusterednb.examples import service as toy
        >>> store, _ = toy.service_store()
        >>> store.delivery_counts()
        {'owed': 0, 'sent': 0, 'failed': 0, 'dropped': 0, 'unwritten': 0}
        """
        counts = dict.fromkeys(("owed", "sent", "failed", "dropped"), 0)
        for state, n in self._all("SELECT state, count(*) FROM outbox GROUP BY state"):
            counts[state] = n
        counts["unwritten"] = self._one(
            "SELECT count(*) FROM requests WHERE state = 'open' AND channel = 'caldav' "
            "AND partstat IS NOT NULL AND written IS NOT partstat"
        )[0]
        return counts


def request_dict(row: sqlite3.Row | None) -> dict | None:
    """A request row as a dict, its JSON columns read (None for no row)."""
    if row is None:
        return None
    record = dict(row)
    for name in ("features", "missing", "reasons", "notes"):
        record[name] = json.loads(record[name])
    return record
