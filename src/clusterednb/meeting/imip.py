"""iMIP (RFC 6047): an iTIP REPLY sent by mail to the organiser.

The message is ``multipart/alternative``: a short text part for people, and the REPLY as a
``text/calendar; method=REPLY; charset=UTF-8`` part for calendar clients (RFC 6047 §2.4: the
``method`` parameter must equal the calendar's METHOD).
"""

from __future__ import annotations

import datetime as dt
import smtplib
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid


def reply_message(
    reply_ics: bytes, sender: str, organizer: str, summary: str, accept: bool | str
) -> EmailMessage:
    """The mail carrying a REPLY.

    Parameters
    ----------
    reply_ics : bytes
        The ``METHOD:REPLY`` calendar.
    sender, organizer : str
        Addresses (without ``mailto:``).
    summary : str
        The meeting's title, for the subject.
    accept : bool or str
        Accepted (True), declined (False), or ``"TENTATIVE"``.

    Examples
    --------
    >>> message = reply_message(b"BEGIN:VCALENDAR\\r\\nMETHOD:REPLY\\r\\nEND:VCALENDAR\\r\\n",
    ...                         "ann@example.org", "carol@example.org", "Planning", accept=True)
    >>> message["To"], message["Subject"]
    ('carol@example.org', 'Accepted: Planning')
    """
    if isinstance(accept, str):
        verb = {"TENTATIVE": "Tentative", "ACCEPTED": "Accepted", "DECLINED": "Declined"}.get(
            accept.upper(), accept.capitalize()
        )
    else:
        verb = "Accepted" if accept else "Declined"
    message = EmailMessage()
    message["From"] = sender
    message["To"] = organizer
    message["Subject"] = f"{verb}: {summary}"
    message["Date"] = format_datetime(dt.datetime.now(dt.UTC))
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message.set_content(f"{sender} has {verb.lower()} your invitation: {summary}\n")
    message.add_alternative(
        reply_ics.decode("utf-8"), subtype="calendar", charset="utf-8", params={"method": "REPLY"}
    )
    return message


def send(message: EmailMessage, host: str, port: int, timeout: float = 30.0) -> None:
    """Send ``message`` through the SMTP server at ``host:port``.

    Examples
    --------
    Through a real SMTP server on this machine (aiosmtpd, as the tests do):

    >>> import socket, pytest
    >>> aiosmtpd = pytest.importorskip("aiosmtpd.controller")
    >>> with socket.socket() as probe:  # a free port on this machine
    ...     probe.bind(("127.0.0.1", 0))
    ...     port = probe.getsockname()[1]
    >>> class Inbox:
    ...     messages = []
    ...     async def handle_DATA(self, server, session, envelope):
    ...         self.messages.append(envelope.content)
    ...         return "250 OK"
    >>> inbox = Inbox()
    >>> controller = aiosmtpd.Controller(inbox, hostname="127.0.0.1", port=port)
    >>> controller.start()
    >>> message = reply_message(b"BEGIN:VCALENDAR\\r\\nEND:VCALENDAR\\r\\n", "ann@example.org",
    ...                         "carol@example.org", "Planning", accept=False)
    >>> send(message, "127.0.0.1", port)
    >>> controller.stop()
    >>> b"Declined: Planning" in inbox.messages[0]
    True
    """
    with smtplib.SMTP(host, port, timeout=timeout) as server:
        server.send_message(message)
