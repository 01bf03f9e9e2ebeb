"""iMIP invitations as mail clients send them, for the mailbox tests.

Written from the documented formats, each named: RFC 6047 (iMIP) §2.4 and §4 (examples) for
the MIME structure; Microsoft's [MS-OXCICAL] (iCalendar to Appointment Object Conversion) for
what Outlook and Exchange put in the calendar — Windows time-zone names in ``TZID`` with their
``VTIMEZONE``, ``X-MICROSOFT-CDO-*`` properties — and base64 transfer encoding; Google
Calendar's invitations (RFC 6047 structure: ``multipart/mixed`` holding a
``multipart/alternative`` with the ``text/calendar; method=REQUEST`` part, and the same
calendar again as an ``invite.ics`` attachment, ``application/ics``); Apple Calendar's
(``text/calendar`` quoted-printable with a ``name=…ics`` parameter beside a text part).
"""

from __future__ import annotations

import base64
import quopri

ORGANIZER = "boss@org.example"


def crlf(text: str) -> str:
    return text.strip("\n").replace("\n", "\r\n") + "\r\n"


def vevent(uid: str, start: str, end: str, *, attendee: str, sequence: int = 0,
           zone: str = "America/New_York", summary: str = "Budget review",
           organizer: str = ORGANIZER, extra: str = "") -> str:  # fmt: skip
    return f"""BEGIN:VEVENT
UID:{uid}
SEQUENCE:{sequence}
DTSTAMP:20261101T120000Z
DTSTART;TZID={zone}:{start}
DTEND;TZID={zone}:{end}
SUMMARY:{summary}
ORGANIZER;CN=The Boss:mailto:{organizer}
ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:{attendee}
{extra}END:VEVENT
"""


NEW_YORK = """BEGIN:VTIMEZONE
TZID:America/New_York
BEGIN:STANDARD
DTSTART:20071104T020000
RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU
TZOFFSETFROM:-0400
TZOFFSETTO:-0500
TZNAME:EST
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:20070311T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU
TZOFFSETFROM:-0500
TZOFFSETTO:-0400
TZNAME:EDT
END:DAYLIGHT
END:VTIMEZONE
"""

W_EUROPE = """BEGIN:VTIMEZONE
TZID:W. Europe Standard Time
BEGIN:STANDARD
DTSTART:16010101T030000
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:16010101T020000
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3
END:DAYLIGHT
END:VTIMEZONE
"""


def vcalendar(*events: str, method: str = "REQUEST", prodid: str = "-//test//EN",
              zones: str = NEW_YORK) -> str:  # fmt: skip
    return crlf(
        f"BEGIN:VCALENDAR\nPRODID:{prodid}\nVERSION:2.0\nMETHOD:{method}\n{zones}"
        + "".join(events)
        + "END:VCALENDAR\n"
    )


def headers(message_id: str, sender: str, to: str, subject: str) -> str:
    return (
        f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Date: Sun, 01 Nov 2026 12:00:00 +0000\r\nMessage-ID: <{message_id}>\r\n"
        "MIME-Version: 1.0\r\n"
    )


def outlook(message_id: str, calendar: str, to: str) -> bytes:
    """Exchange/Outlook: ``multipart/alternative`` (text, HTML, the calendar in base64)."""
    encoded = base64.encodebytes(calendar.encode("utf-8")).decode().replace("\n", "\r\n")
    return (
        headers(message_id, ORGANIZER, to, "Budget review")
        + 'Content-Type: multipart/alternative; boundary="_000_outlook_"\r\n\r\n'
        '--_000_outlook_\r\nContent-Type: text/plain; charset="us-ascii"\r\n\r\n'
        "Let us review the budget.\r\n"
        '--_000_outlook_\r\nContent-Type: text/html; charset="us-ascii"\r\n\r\n'
        "<html><body>Let us review the budget.</body></html>\r\n"
        '--_000_outlook_\r\nContent-Type: text/calendar; charset="utf-8"; method=REQUEST\r\n'
        "Content-Transfer-Encoding: base64\r\n\r\n" + encoded + "--_000_outlook_--\r\n"
    ).encode()


def google(message_id: str, calendar: str, to: str) -> bytes:
    """Google Calendar: the calendar as an alternative (7bit) and again as ``invite.ics``."""
    attached = base64.encodebytes(calendar.encode("utf-8")).decode().replace("\n", "\r\n")
    return (
        headers(message_id, ORGANIZER, to, "Invitation: Planning")
        + 'Content-Type: multipart/mixed; boundary="mixed"\r\n\r\n'
        '--mixed\r\nContent-Type: multipart/alternative; boundary="alt"\r\n\r\n'
        '--alt\r\nContent-Type: text/plain; charset="UTF-8"\r\n\r\nYou have been invited.\r\n'
        '--alt\r\nContent-Type: text/calendar; charset="UTF-8"; method=REQUEST\r\n'
        "Content-Transfer-Encoding: 7bit\r\n\r\n" + calendar + "--alt--\r\n"
        '--mixed\r\nContent-Type: application/ics; name="invite.ics"\r\n'
        'Content-Disposition: attachment; filename="invite.ics"\r\n'
        "Content-Transfer-Encoding: base64\r\n\r\n" + attached + "--mixed--\r\n"
    ).encode()


def apple(message_id: str, calendar: str, to: str) -> bytes:
    """Apple Calendar: a text part and the calendar quoted-printable, named ``.ics``."""
    encoded = quopri.encodestring(calendar.encode("utf-8")).decode()
    return (
        headers(message_id, ORGANIZER, to, "Invitation: Design")
        + 'Content-Type: multipart/mixed; boundary="Apple-Mail=_1"\r\n\r\n'
        "--Apple-Mail=_1\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nDesign.\r\n"
        "--Apple-Mail=_1\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST;\r\n"
        ' name="iCal-20261101-120000.ics"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
        + encoded
        + "\r\n--Apple-Mail=_1--\r\n"
    ).encode()


def plain(message_id: str, calendar: str, to: str, sender: str = ORGANIZER,
          charset: str = "utf-8") -> bytes:  # fmt: skip
    """A bare ``text/calendar`` message (as a script or a server sends a CANCEL)."""
    return (
        headers(message_id, sender, to, "Calendar")
        + f"Content-Type: text/calendar; charset={charset}; method=REQUEST\r\n\r\n"
    ).encode() + calendar.encode(charset)


def two_parts(message_id: str, first: str, second: str, to: str) -> bytes:
    """One message carrying two calendars (two meetings)."""
    return (
        headers(message_id, ORGANIZER, to, "Two meetings")
        + 'Content-Type: multipart/mixed; boundary="two"\r\n\r\n'
        "--two\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\r\n\r\n"
        + first
        + "--two\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\r\n\r\n"
        + second
        + "--two--\r\n"
    ).encode()


def forwarded(message_id: str, inner: bytes, to: str) -> bytes:
    """An invitation forwarded as an attached message (``message/rfc822``)."""
    return (
        (
            headers(message_id, "colleague@org.example", to, "Fwd: Budget review")
            + 'Content-Type: multipart/mixed; boundary="fwd"\r\n\r\n'
            "--fwd\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nFYI, see below.\r\n"
            "--fwd\r\nContent-Type: message/rfc822\r\n\r\n"
        ).encode()
        + inner
        + b"\r\n--fwd--\r\n"
    )
