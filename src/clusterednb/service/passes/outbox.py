"""Sending the outbox (:mod:`~clusterednb.service.delivery_tables`): every reply a person is
owed, through one SMTP connection, each recorded as sent the moment the server accepts it.

A reply the server refuses for now (a 4xx reply, a dropped connection, no server) stays owed
and is sent again, with the same bytes and Message-ID, by the next pass; one refused for good
(a 5xx reply) is kept as failed with the server's words. A reply accepted by the server but not
yet recorded when the process dies is sent once more by the next pass: SMTP's at-least-once
(RFC 5321 §6.1), the only duplicate possible, and the same Message-ID lets the organiser's
client recognise it.
"""

from __future__ import annotations

import email
import email.policy
import smtplib
from dataclasses import dataclass, field
from typing import Any

from clusterednb.exceptions import warn_at_caller
from clusterednb.meeting.errors import MeetingWarning

TIMEOUT = 30.0
"""Seconds an SMTP conversation may stall before the pass gives up on it (the reply stays
owed)."""


@dataclass
class Delivery:
    """What sending a person's outbox did: the request ids whose reply went, and those still
    owed or failed with the reason in one line."""

    sent: list[int] = field(default_factory=list)
    owed: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """The first problem, in one line (None: everything went)."""
        return next(iter({**self.owed, **self.failed}.values()), None)


def _subject(message: bytes) -> str:
    head = email.message_from_bytes(message, policy=email.policy.default)
    return str(head.get("Subject", "(no subject)"))


def _why(error: BaseException) -> tuple[str, bool]:
    """The server's refusal in words, and whether it is permanent (5xx)."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in error.recipients.values()]
        said = "; ".join(
            f"{who}: {code} {text.decode('utf-8', 'replace') if isinstance(text, bytes) else text}"
            for who, (code, text) in error.recipients.items()
        )
        return f"recipient refused ({said})", all(500 <= code < 600 for code in codes)
    if isinstance(error, smtplib.SMTPResponseException):
        text = error.smtp_error
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        return f"{error.smtp_code} {text}", 500 <= error.smtp_code < 600
    if isinstance(error, ConnectionRefusedError):
        return "the connection was refused (is the SMTP server running?)", False
    if isinstance(error, TimeoutError):
        return "no answer (timed out)", False
    if isinstance(error, smtplib.SMTPServerDisconnected):
        return "the server closed the connection", False
    return f"{type(error).__name__}: {error}", False


def send_owed(store: Any, user: str, smtp: tuple[str, int]) -> Delivery:
    """Send ``user``'s owed replies through ``smtp`` (host, port); what went and what did not.

    Examples
    --------
    With no SMTP server listening, the reply stays owed and says why, naming the server and
    the invitation:

    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> record, _ = store.add_request("ann", toy.request_record(), toy.outgoing_reply())
    >>> done = send_owed(store, "ann", ("127.0.0.1", 9))
    >>> done.sent
    []
    >>> print(done.error)
    the SMTP server 127.0.0.1:9 did not take the reply 'Accepted: Planning' to
    carol@example.org: the connection was refused (is the SMTP server running?)
    >>> store.outbox("ann")[0]["state"], store.outbox("ann")[0]["attempts"]
    ('owed', 1)
    """
    done = Delivery()
    owed = store.outbox(user, "owed")
    if not owed:
        return done
    host, port = smtp
    where = f"{host}:{port}"

    def refused(row: dict[str, Any], error: BaseException) -> bool:
        """Record the refusal of ``row``; whether the connection is still usable."""
        reason, permanent = _why(error)
        text = (
            f"the SMTP server {where} did not take the reply {_subject(row['message'])!r} to "
            f"{row['recipient']}: {reason}"
        )
        store.reply_refused(row["id"], text, permanent)
        (done.failed if permanent else done.owed)[row["request_id"]] = text
        return isinstance(error, smtplib.SMTPResponseException | smtplib.SMTPRecipientsRefused)

    try:
        connection = smtplib.SMTP(host, port, timeout=TIMEOUT)
    except (OSError, smtplib.SMTPException) as error:
        for row in owed:
            refused(row, error)
        return done
    try:
        for index, row in enumerate(owed):
            try:
                connection.sendmail(row["sender"], [row["recipient"]], bytes(row["message"]))
            except (OSError, smtplib.SMTPException) as error:
                if refused(row, error) and getattr(error, "smtp_code", 0) != 421:
                    continue
                for later in owed[index + 1 :]:  # the connection is gone: the rest wait too
                    refused(later, error)
                break
            store.reply_sent(row["id"])
            done.sent.append(row["request_id"])
    finally:
        try:
            connection.quit()
        except (OSError, smtplib.SMTPException):
            connection.close()
    return done


def say_delivery(done: Delivery, mailed: dict[int, Any], sent: str = "") -> None:
    """Add to each pass result whose reply was queued (``mailed``: request id → result)
    whether it went (``sent`` is added when it did), and warn of each reply still owed."""
    for request_id, result in mailed.items():
        if request_id in done.sent:
            result.action += sent
        elif request_id in done.owed:
            result.action += f"; the reply waits in the outbox ({done.owed[request_id]})"
        elif request_id in done.failed:
            result.action += f"; the reply failed ({done.failed[request_id]})"
    for problem in {**done.owed, **done.failed}.values():
        warn_at_caller(problem, MeetingWarning)
