"""The iTIP ``METHOD:REPLY`` that answers an invitation, a check of the rules it obeys, and the
iMIP mail (RFC 6047) that carries it to the organiser.

RFC 5546 §3.2.3 (REPLY for a ``VEVENT``): exactly one ``ATTENDEE`` — the person replying, with
their ``PARTSTAT`` —, the invitation's ``ORGANIZER``, ``UID`` and ``SEQUENCE``, its
``RECURRENCE-ID`` when the invitation is for one occurrence of a series (without it the reply
answers the whole series), and a ``DTSTAMP``, which RFC 5545 §3.8.7.2 requires in UTC.
RFC 5545 §3.2.19: every ``TZID`` the reply uses needs a ``VTIMEZONE`` in the same object.

The mail is ``multipart/alternative``: a short text part for people, and the REPLY as a
``text/calendar; method=REPLY; charset=UTF-8`` part for calendar clients (RFC 6047 §2.4: the
``method`` parameter must equal the calendar's METHOD).
"""

from __future__ import annotations

import datetime as dt
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from zoneinfo import ZoneInfo

import icalendar

from clusterednb.exceptions import check_choice
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import (
    TIME_PROPERTIES,
    attendee_properties,
    calendar_address,
    find_attendee,
    request_event,
    sequence_number,
    unknown_time_zones,
)

PRODID = "-//clusterednb//meeting assistant//EN"
ANSWERS = ("ACCEPTED", "DECLINED", "TENTATIVE", "DELEGATED")
"""The ``PARTSTAT`` values a REPLY to a ``VEVENT`` may carry (RFC 5546 §3.2.3)."""


def _answering_attendee(event: icalendar.Event, email: str, partstat: str) -> icalendar.vCalAddress:
    """The user's own ``ATTENDEE`` property, its parameters kept, with the new ``PARTSTAT``."""
    original = find_attendee(event, email)
    address = icalendar.vCalAddress(str(original))
    for key, value in original.params.items():
        if key not in ("PARTSTAT", "RSVP"):
            address.params[key] = value
    address.params["PARTSTAT"] = partstat
    return address


def make_reply(
    request: icalendar.Calendar,
    attendee: str,
    accept: bool | str,
    stamp: dt.datetime,
    fallback_zone: str | None = None,
    comment: str | None = None,
) -> icalendar.Calendar:
    """The RFC 5546 ``METHOD:REPLY`` answering ``request`` for ``attendee``.

    Parameters
    ----------
    request : icalendar.Calendar
        The invitation (checked by :func:`~clusterednb.meeting.invitation.request_event`).
    attendee : str
        The user's address; must be one of the invitation's attendees.
    accept : bool or str
        ``PARTSTAT=ACCEPTED`` (True) or ``DECLINED`` (False), or a ``PARTSTAT`` of
        :data:`ANSWERS` by name (``"TENTATIVE"``: not decided yet).
    stamp : datetime
        ``DTSTAMP`` of the reply (aware; written in UTC; passed in so replies are
        reproducible).
    fallback_zone : str, optional
        IANA zone in which a time with an unknown ``TZID`` was read. Such a ``DTSTART`` or
        ``DTEND`` is left out of the reply (both are optional in a REPLY); such a
        ``RECURRENCE-ID`` (required) is written in UTC as read in this zone. Without it an
        unknown zone on a ``RECURRENCE-ID`` is an error.
    comment : str, optional
        One sentence for the organiser (RFC 5546 ``COMMENT``); none by default.

    Returns
    -------
    icalendar.Calendar
        One ``VEVENT`` and a ``VTIMEZONE`` for every ``TZID`` it uses.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> request, calendar, directory = toy.pending()
    >>> stamp = dt.datetime(2026, 11, 24, 9, tzinfo=dt.UTC)
    >>> reply = make_reply(request, directory.user("user00").email, True, stamp)
    >>> str(reply["METHOD"]), reply_problems(reply, request)  # it obeys RFC 5546
    ('REPLY', [])
    >>> maybe = make_reply(request, directory.user("user00").email, "TENTATIVE", stamp,
    ...                    comment="My assistant will confirm soon.")
    >>> answer = maybe.walk("VEVENT")[0]
    >>> answer["ATTENDEE"].params["PARTSTAT"], str(answer["COMMENT"])
    ('TENTATIVE', 'My assistant will confirm soon.')
    """
    event = request_event(request, attendee)
    if stamp.tzinfo is None:
        raise MeetingError("the reply's DTSTAMP must be an aware date-time")
    reply = icalendar.Calendar()
    reply.add("PRODID", PRODID)
    reply.add("VERSION", "2.0")
    reply.add("METHOD", "REPLY")
    answer = icalendar.Event()
    answer.add("UID", str(event["UID"]))
    answer.add("SEQUENCE", sequence_number(event))
    answer.add("DTSTAMP", stamp.astimezone(dt.UTC))
    answer["ORGANIZER"] = event["ORGANIZER"]
    unknown = unknown_time_zones(event)
    for name in TIME_PROPERTIES:
        if name not in event:
            continue
        if name not in unknown:
            answer[name] = event[name]
        elif name == "RECURRENCE-ID":
            if fallback_zone is None:
                raise MeetingError(
                    f"the request's RECURRENCE-ID uses the unknown time zone {unknown[name]!r}"
                )
            local = event.decoded(name).replace(tzinfo=ZoneInfo(fallback_zone))
            answer.add(name, local.astimezone(dt.UTC))
    if "SUMMARY" in event:
        answer["SUMMARY"] = event["SUMMARY"]
    if isinstance(accept, str):
        check_choice("a reply's PARTSTAT", accept.upper(), ANSWERS, MeetingError)
        partstat = accept.upper()
    else:
        partstat = "ACCEPTED" if accept else "DECLINED"
    answer.add("ATTENDEE", _answering_attendee(event, attendee, partstat))
    if comment:
        answer.add("COMMENT", comment)
    reply.add_component(answer)
    _add_time_zones(reply, request)
    problems = reply_problems(reply, request)
    if problems:
        raise MeetingError("the reply breaks RFC 5546: " + "; ".join(problems))
    return reply


def _add_time_zones(reply: icalendar.Calendar, request: icalendar.Calendar) -> None:
    """A ``VTIMEZONE`` per ``TZID`` used: the request's own, else from the IANA database."""
    own = {str(zone["TZID"]): zone for zone in request.walk("VTIMEZONE")}
    zones = [own[tzid] for tzid in sorted(reply.get_used_tzids()) if tzid in own]
    reply.subcomponents[:0] = zones
    reply.add_missing_timezones()


def _used_tzids(event: icalendar.Event) -> set[str]:
    used = set()
    for value in event.property_items(recursive=False):
        tzid = getattr(value[1], "params", {}).get("TZID")
        if tzid:
            used.add(str(tzid))
    return used


def reply_problems(
    reply: icalendar.Calendar | bytes, request: icalendar.Calendar | None = None
) -> list[str]:
    """Every way ``reply`` breaks the RFC 5546 REPLY rules (empty: it obeys them).

    Parameters
    ----------
    reply : icalendar.Calendar or bytes
    request : icalendar.Calendar, optional
        The invitation answered; then ``UID``, ``SEQUENCE``, ``ORGANIZER`` and
        ``RECURRENCE-ID`` must equal its own.

    Returns
    -------
    list of str

    Examples
    --------
    >>> reply_problems(b"BEGIN:VCALENDAR\\r\\nEND:VCALENDAR\\r\\n")
    ['METHOD is None, not REPLY', 'VERSION:2.0 and PRODID are required (RFC 5545 §3.6)',
     '0 VEVENTs, expected exactly one']
    """
    if isinstance(reply, bytes):
        try:
            reply = icalendar.Calendar.from_ical(reply)
        except ValueError as error:
            return [f"not iCalendar data ({error})"]
    problems = []
    if str(reply.get("METHOD", "")).upper() != "REPLY":
        problems.append(f"METHOD is {reply.get('METHOD')!s}, not REPLY")
    if str(reply.get("VERSION", "")) != "2.0" or "PRODID" not in reply:
        problems.append("VERSION:2.0 and PRODID are required (RFC 5545 §3.6)")
    others = [c.name for c in reply.subcomponents if c.name not in ("VEVENT", "VTIMEZONE")]
    if others:
        problems.append(f"unexpected components {others}")
    events = [c for c in reply.subcomponents if c.name == "VEVENT"]
    if len(events) != 1:
        return [*problems, f"{len(events)} VEVENTs, expected exactly one"]
    event = events[0]
    attendees = attendee_properties(event)
    if len(attendees) != 1:
        problems.append(f"{len(attendees)} ATTENDEEs, expected exactly one")
    elif attendees[0].params.get("PARTSTAT", "").upper() not in ANSWERS:
        problems.append(f"the ATTENDEE's PARTSTAT is {attendees[0].params.get('PARTSTAT')!r}")
    for name in ("ORGANIZER", "UID", "DTSTAMP"):
        if name not in event:
            problems.append(f"no {name}")
    if "DTSTAMP" in event:
        stamp = event.decoded("DTSTAMP")
        if not isinstance(stamp, dt.datetime) or stamp.utcoffset() != dt.timedelta(0):
            problems.append("DTSTAMP is not in UTC (RFC 5545 §3.8.7.2)")
    defined = {str(zone["TZID"]) for zone in reply.walk("VTIMEZONE")}
    missing = _used_tzids(event) - defined
    if missing:
        problems.append(f"no VTIMEZONE for {sorted(missing)} (RFC 5545 §3.2.19)")
    if request is not None:
        problems.extend(_against_request(event, request_event(request)))
    return problems


def _against_request(event: icalendar.Event, invitation: icalendar.Event) -> list[str]:
    problems = []
    if str(event.get("UID")) != str(invitation["UID"]):
        problems.append("UID differs from the invitation's")
    if int(str(event.get("SEQUENCE", 0))) != sequence_number(invitation):
        problems.append("SEQUENCE differs from the invitation's")
    if calendar_address(event.get("ORGANIZER", "")) != calendar_address(invitation["ORGANIZER"]):
        problems.append("ORGANIZER differs from the invitation's")
    if "RECURRENCE-ID" in invitation:
        if "RECURRENCE-ID" not in event:
            problems.append("no RECURRENCE-ID: the reply would answer the whole series")
        else:
            ours, theirs = event.decoded("RECURRENCE-ID"), invitation.decoded("RECURRENCE-ID")
            comparable = getattr(theirs, "tzinfo", None) is not None or type(ours) is type(theirs)
            if comparable and ours != theirs:
                problems.append("RECURRENCE-ID differs from the invitation's")
    elif "RECURRENCE-ID" in event:
        problems.append("a RECURRENCE-ID the invitation does not have")
    return problems


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
