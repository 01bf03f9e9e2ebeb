"""The calendar parts of a mail message (iMIP, RFC 6047).

A mail client sends an invitation as a ``text/calendar`` part with a ``method`` parameter:
as an alternative to the text (Outlook, Google Calendar, Apple Calendar), as an attachment
(``invite.ics``, as ``text/calendar`` or ``application/ics``), inside a forwarded message
(``message/rfc822``), in any transfer encoding (base64, quoted-printable, 7 or 8 bit) and
charset (UTF-8, Latin-1, Windows-1252, …).
:func:`calendar_parts` finds them all and decodes each to a calendar; a part that is not
iCalendar is reported by the message's Message-ID, never fatal.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass
from email.message import EmailMessage

import icalendar

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import read_calendar

CONTENT_TYPES = ("text/calendar", "application/ics")
"""Parts read as calendars: RFC 6047's ``text/calendar``, and the ``application/ics`` some
clients attach (Google Calendar adds its ``invite.ics`` so)."""
METHODS = ("REQUEST", "CANCEL", "REPLY", "COUNTER", "PUBLISH", "ADD", "REFRESH", "DECLINECOUNTER")


@dataclass(frozen=True)
class CalendarPart:
    """One ``text/calendar`` part of a message.

    Attributes
    ----------
    method : str
        The calendar's METHOD (upper case), else the part's ``method`` parameter, else "".
    calendar : icalendar.Calendar
    data : bytes
        The calendar as UTF-8 bytes.
    """

    method: str
    calendar: icalendar.Calendar
    data: bytes


def read_message(raw: bytes) -> EmailMessage:
    """A message from its bytes (RFC 5322), with the modern policy.

    Examples
    --------
    >>> read_message(b"Message-ID: <m1@example.org>\\r\\n\\r\\nhello\\r\\n")["Message-ID"]
    '<m1@example.org>'
    """
    return email.message_from_bytes(raw, policy=email.policy.default)


def message_id(message: EmailMessage) -> str:
    """The message's Message-ID, or a placeholder naming that it has none.

    Examples
    --------
    >>> message_id(read_message(b"Subject: x\\r\\n\\r\\n"))
    '(no Message-ID)'
    """
    return str(message.get("Message-ID", "")).strip() or "(no Message-ID)"


def calendar_parts(message: EmailMessage) -> tuple[list[CalendarPart], list[str]]:
    """Every calendar part of ``message`` (forwarded messages included), decoded; and a note
    for each part that could not be read.

    Examples
    --------
    An invitation as Outlook sends it, quoted-printable in Windows-1252:

    >>> raw = (b"Message-ID: <i1@example.org>\\r\\nMIME-Version: 1.0\\r\\n"
    ...        b"Content-Type: text/calendar; method=REQUEST; charset=windows-1252\\r\\n"
    ...        b"Content-Transfer-Encoding: quoted-printable\\r\\n\\r\\n"
    ...        b"BEGIN:VCALENDAR\\r\\nMETHOD:REQUEST\\r\\nBEGIN:VEVENT\\r\\nUID:1\\r\\n"
    ...        b"SUMMARY:Caf=E9\\r\\nEND:VEVENT\\r\\nEND:VCALENDAR\\r\\n")
    >>> (part,), notes = calendar_parts(read_message(raw))
    >>> part.method, str(part.calendar.walk("VEVENT")[0]["SUMMARY"]), notes
    ('REQUEST', 'Café', [])
    """
    parts, notes = [], []
    for part in message.walk():
        if part.get_content_type() not in CONTENT_TYPES:
            continue
        try:
            text = part.get_content()
            if isinstance(text, bytes):
                text = text.decode(part.get_content_charset() or "utf-8", errors="strict")
            data = text.encode("utf-8")
            calendar = read_calendar(data)
        except (MeetingError, LookupError, UnicodeError, ValueError) as error:
            notes.append(f"message {message_id(message)}: a calendar part skipped: {error}")
            continue
        method = str(calendar.get("METHOD", "") or part.get_param("method") or "").upper()
        parts.append(CalendarPart(method, calendar, data))
    return parts, notes
