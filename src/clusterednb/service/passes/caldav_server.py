"""The CalDAV server as a pass talks to it: what went wrong when connecting, in one line, and
an attendee's ``PARTSTAT`` written under the ETag that was read."""

from __future__ import annotations

import re
import socket
import ssl
from typing import Any

import icalendar

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import find_attendee, read_calendar, recurrence_key

MAX_WRITE_ATTEMPTS = 3
"""Reads and writes of one event before a pass gives up on a busy server."""


def connection_problem(error: BaseException) -> str:
    """What went wrong when connecting, in one line: the root cause among the chained
    exceptions (a TLS certificate, a refused connection, a name, a login), without the
    object addresses that HTTP libraries print.

    Examples
    --------
    >>> import ssl
    >>> cause = ssl.SSLCertVerificationError("certificate verify failed: self-signed")
    >>> try:
    ...     try:
    ...         raise cause
    ...     except ssl.SSLError as inner:
    ...         raise OSError("<urllib3.HTTPSConnection object at 0x7f00>: failed") from inner
    ... except OSError as error:
    ...     print(connection_problem(error))
    the server's TLS certificate cannot be verified (...); for a private certificate authority ...
    >>> connection_problem(ConnectionRefusedError(111, "Connection refused"))
    'the connection was refused (is the server running on that host and port?)'
    """
    chain, seen = [], set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    for found in chain:
        if isinstance(found, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(
            found
        ):
            detail = getattr(found, "verify_message", None) or _clean(str(found))
            return (
                f"the server's TLS certificate cannot be verified ({detail}); for a private "
                "certificate authority pass --ca-bundle FILE"
            )
    for found in chain:
        if isinstance(found, ssl.SSLError):
            return f"TLS failed ({_clean(str(found))})"
        if isinstance(found, ConnectionRefusedError) or "Connection refused" in str(found):
            return "the connection was refused (is the server running on that host and port?)"
        if isinstance(found, socket.gaierror) or "Name or service not known" in str(found):
            return "the server's name cannot be resolved"
    text = _clean(str(error)) or type(error).__name__
    if any(word in text for word in ("401", "Unauthorized", "403", "Forbidden")):
        return f"the login was refused ({text})"
    return f"{type(error).__name__}: {text}"


def _clean(text: str) -> str:
    """``text`` without ``<... object at 0x...>`` and on one line."""
    return " ".join(re.sub(r"<[^<>]* at 0x[0-9a-f]+>:?", "", text).split())


def _matching_event(
    calendar: icalendar.Calendar, uid: str, recurrence_id: str
) -> icalendar.Event | None:
    for event in calendar.walk("VEVENT"):
        if str(event.get("UID")) == uid and recurrence_key(event) == recurrence_id:
            return event
    return None


def version_of(event: icalendar.Event) -> tuple[int, bytes]:
    """What identifies the version of an invitation that was decided: its ``SEQUENCE`` and
    its ``DTSTART`` (value and time zone; some organisers move a meeting without raising the
    sequence).

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", __import__("datetime").datetime(2026, 11, 25, 10))
    >>> version_of(event)
    (0, b'20261125T100000')
    """
    start = event.get("DTSTART")
    stamp = b"" if start is None else start.to_ical()
    zone = "" if start is None else str(start.params.get("TZID", ""))
    return int(str(event.get("SEQUENCE", 0)).strip() or 0), stamp + (
        f";{zone}".encode() if zone else b""
    )


def _put(client: Any, href: str, body: bytes, headers: dict[str, str]) -> Any:
    """PUT ``body`` to ``href``; a refusal the CalDAV library raises (401, 403) as the
    project's error naming the object."""
    try:
        return client.request(href, "PUT", body, headers)
    except Exception as error:
        if type(error).__name__ != "AuthorizationError":
            raise
        reason = str(getattr(error, "reason", "") or "refused")
        code = {"Forbidden": "403 ", "Unauthorized": "401 "}.get(reason, "")
        hint = "; a read-only calendar?" if code == "403 " else ""
        raise MeetingError(f"the server refused to write {href} ({code}{reason}{hint})") from error


def set_partstat(
    client: Any,
    href: str,
    uid: str,
    recurrence_id: str,
    email: str,
    partstat: str,
    replaceable: tuple[str, ...] = ("NEEDS-ACTION",),
    version: tuple[int, bytes] | None = None,
    comment: str | None = None,
) -> str:
    """Set the user's PARTSTAT in the event on the server, honouring its ETag.

    Reads the object, changes only the attendee's ``PARTSTAT`` in the matching ``VEVENT``
    and writes it back with ``If-Match``; on ``412 Precondition Failed`` (someone changed it
    meanwhile) it reads again and retries. It leaves the event alone if the user's status is
    no longer one of ``replaceable`` (waiting: ``NEEDS-ACTION``; with an answer to pass on,
    also what the assistant wrote before), or if the invitation is no longer the ``version``
    that was decided (:func:`version_of`: the organiser raised the ``SEQUENCE`` or moved the
    start). A status already equal to ``partstat`` counts as written (a write whose response
    was lost is not repeated). ``comment`` goes into the event's ``COMMENT`` (on a server
    that schedules, RFC 6638, the REPLY the server sends is made from the event).

    Returns
    -------
    {"written", "changed on the server"}

    Examples
    --------
    A stand-in for a CalDAV client, holding one event and its ETag in memory (the tests use a
    real Radicale server):

    >>> from types import SimpleNamespace
    >>> class OneEvent:
    ...     def __init__(self, body):
    ...         self.body, self.etag = body, '"1"'
    ...     def request(self, href, method, body=None, headers=None):
    ...         if method == "PUT":
    ...             self.body, self.etag = body, '"2"'
    ...         return SimpleNamespace(status=204 if method == "PUT" else 200, raw=self.body,
    ...                                headers={"ETag": self.etag})
    >>> server = OneEvent(chr(10).join([  # one content line per item
    ...     "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//example//EN", "BEGIN:VEVENT",
    ...     "UID:m1", "DTSTAMP:20261124T090000Z", "DTSTART:20261125T100000Z",
    ...     "ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:ann@example.org", "END:VEVENT",
    ...     "END:VCALENDAR", ""]).encode())
    >>> set_partstat(server, "/ann/m1.ics", "m1", "", "ann@example.org", "ACCEPTED")
    'written'
    >>> b"PARTSTAT=ACCEPTED" in server.body
    True
    >>> set_partstat(server, "/ann/m1.ics", "m1", "", "ann@example.org", "DECLINED")
    'changed on the server'
    """
    for _ in range(MAX_WRITE_ATTEMPTS):
        response = client.request(href, "GET")
        etag = response.headers.get("ETag") or response.headers.get("etag")
        body = response.raw if isinstance(response.raw, bytes) else str(response.raw).encode()
        calendar = read_calendar(body)
        event = _matching_event(calendar, uid, recurrence_id)
        attendee = None if event is None else find_attendee(event, email)
        current = "" if attendee is None else attendee.params.get("PARTSTAT", "NEEDS-ACTION")
        if attendee is None or (version is not None and version_of(event) != version):
            return "changed on the server"
        if str(current).upper() == partstat:
            return "written"
        if str(current).upper() not in replaceable:
            return "changed on the server"
        attendee.params["PARTSTAT"] = partstat
        if comment:
            event.pop("COMMENT", None)
            event.add("COMMENT", comment)
        headers = {"Content-Type": "text/calendar; charset=utf-8"}
        if etag:
            headers["If-Match"] = etag
        written = _put(client, href, calendar.to_ical(), headers)
        if written.status in (200, 201, 204):
            return "written"
        if written.status != 412:
            reason = getattr(written, "reason", "") or ""
            raise MeetingError(
                f"the server refused to write {href} ({written.status} {reason}".rstrip() + ")"
            )
    return "changed on the server"
