"""Reading iCalendar data and checking an invitation before anyone answers it.

The rules come from RFC 5545 (iCalendar) and RFC 5546 (iTIP): an invitation that may be
answered is a ``VEVENT`` with ``UID``, ``DTSTART`` and ``ORGANIZER`` (RFC 5546 §3.2.2, the
REQUEST table), whose ``METHOD`` is ``REQUEST`` or absent (calendar servers and exports store
invitations without the iTIP method), that is not cancelled (§3.2.5 — a cancelled event needs
no reply), and that lists the user among its ``ATTENDEE``\\ s but not as its ``ORGANIZER``
(an uninvited "party crasher" or the organiser must not reply, §3.2.3 and §2.1.5).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import icalendar

from clusterednb.meeting.errors import MeetingError

TIME_PROPERTIES = ("DTSTART", "DTEND", "RECURRENCE-ID")
"""The properties whose time zone the assistant reads (and copies into a reply)."""


def read_calendar(source: str | Path | bytes) -> icalendar.Calendar:
    """Parse an ``.ics`` file (path) or its bytes; :class:`MeetingError` when malformed.

    Parameters
    ----------
    source : str, Path or bytes
        A path to an ``.ics`` file, or the file's bytes.

    Returns
    -------
    icalendar.Calendar

    Examples
    --------
    >>> lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//example//EN", "METHOD:REQUEST",
    ...          "BEGIN:VEVENT", "UID:budget-1@example.org", "DTSTAMP:20261123T090000Z",
    ...          "DTSTART:20261124T130000Z", "ORGANIZER:mailto:boss@example.org",
    ...          "ATTENDEE:mailto:ana@example.org",
    ...          "END:VEVENT", "END:VCALENDAR"]
    >>> calendar = read_calendar("".join(line + chr(13) + chr(10) for line in lines).encode())
    >>> str(request_event(calendar, "ana@example.org")["UID"])
    'budget-1@example.org'
    """
    name = "the calendar data" if isinstance(source, bytes) else str(source)
    try:
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
    except OSError as error:
        raise MeetingError(f"cannot read calendar {name}: {error.strerror or error}") from error
    try:
        return icalendar.Calendar.from_ical(data)
    except (ValueError, IndexError, KeyError, UnicodeDecodeError) as error:
        raise MeetingError(f"{name}: not valid iCalendar data ({error})") from error


def calendar_address(value: object) -> str:
    """An ``ORGANIZER``/``ATTENDEE`` value as a lower-case address without ``mailto:``.

    Examples
    --------
    >>> calendar_address("MAILTO:Ana@Example.org ")
    'ana@example.org'
    """
    return str(value).strip().lower().removeprefix("mailto:")


def attendee_properties(event: icalendar.Event) -> list[icalendar.vCalAddress]:
    """Every ``ATTENDEE`` of ``event`` (a list even when there is one).

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("ATTENDEE", "mailto:Ana@Example.org", parameters={"PARTSTAT": "NEEDS-ACTION"})
    >>> [calendar_address(found) for found in attendee_properties(event)]
    ['ana@example.org']
    """
    found = event.get("ATTENDEE", [])
    return list(found) if isinstance(found, list) else [found]


def find_attendee(event: icalendar.Event, email: str) -> icalendar.vCalAddress | None:
    """The ``ATTENDEE`` property of ``email`` in ``event`` (case-insensitive), or None.

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("ATTENDEE", "mailto:Ana@Example.org", parameters={"PARTSTAT": "NEEDS-ACTION"})
    >>> str(find_attendee(event, "ANA@example.org").params["PARTSTAT"])
    'NEEDS-ACTION'
    >>> find_attendee(event, "ben@example.org") is None
    True
    """
    wanted = calendar_address(email)
    for attendee in attendee_properties(event):
        if calendar_address(attendee) == wanted:
            return attendee
    return None


def _parse_errors(event: icalendar.Event) -> None:
    """Refuse properties that icalendar could not decode, naming the property and value."""
    for name, message in getattr(event, "errors", []):
        raise MeetingError(f"the request's {name} cannot be read: {message}")


def recurrence_key(event: icalendar.Event) -> str:
    """``RECURRENCE-ID`` as written (with its zone), or "" for a whole event or series.

    Examples
    --------
    >>> recurrence_key(icalendar.Event())  # a whole event or series
    ''
    """
    return event["RECURRENCE-ID"].to_ical().decode() if "RECURRENCE-ID" in event else ""


def sequence_number(event: icalendar.Event) -> int:
    """``SEQUENCE`` (0 when absent); :class:`MeetingError` unless a non-negative integer.

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("SEQUENCE", 2)
    >>> sequence_number(event), sequence_number(icalendar.Event())
    (2, 0)
    """
    raw = event.get("SEQUENCE", 0)
    try:
        value = int(str(raw))
    except ValueError:
        value = -1
    if value < 0:
        raise MeetingError(f"the request's SEQUENCE {str(raw)!r} is not a non-negative integer")
    return value


YEARS = (1970, 2100)
"""The years a meeting may start in; outside them an invitation is refused, not decided."""


def check_start_year(event: icalendar.Event) -> None:
    """Refuse an event that starts before 1970 or after 2100 (a typo, or a test that leaked
    into a calendar), naming its year.

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("UID", "old@example.org")
    >>> event.add("DTSTART", dt.datetime(1900, 1, 1, 9))
    >>> check_start_year(event)
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: the request old@example.org starts in 1900, outside ...
    """
    start = event.decoded("DTSTART")
    if not YEARS[0] <= start.year <= YEARS[1]:
        raise MeetingError(
            f"the request {event.get('UID')} starts in {start.year}, outside "
            f"{YEARS[0]}-{YEARS[1]}: refused, not decided"
        )


def request_event(request: icalendar.Calendar, attendee: str | None = None) -> icalendar.Event:
    """The one ``VEVENT`` of an invitation that ``attendee`` may answer.

    Parameters
    ----------
    request : icalendar.Calendar
        ``METHOD:REQUEST`` (or no ``METHOD``) with exactly one ``VEVENT``.
    attendee : str, optional
        The user's address; when given, the user must be an attendee and not the organiser.

    Returns
    -------
    icalendar.Event

    Raises
    ------
    MeetingError
        Naming the rule the invitation breaks (see the module's docstring).

    Examples
    --------
    >>> calendar = icalendar.Calendar()
    >>> calendar.add("METHOD", "REQUEST")
    >>> event = icalendar.Event()
    >>> event.add("UID", "budget-1@example.org")
    >>> event.add("DTSTART", dt.datetime(2026, 11, 24, 13, tzinfo=dt.timezone.utc))
    >>> event.add("ORGANIZER", "mailto:boss@example.org")
    >>> event.add("ATTENDEE", "mailto:ana@example.org")
    >>> calendar.add_component(event)
    >>> str(request_event(calendar, "ana@example.org")["UID"])
    'budget-1@example.org'
    """
    method = str(request.get("METHOD", "")).upper()
    if method and method != "REQUEST":
        raise MeetingError(f"the request's METHOD is {method}, expected REQUEST")
    events = list(request.walk("VEVENT"))
    if len(events) != 1:
        raise MeetingError(f"a request must hold exactly one VEVENT, found {len(events)}")
    event = events[0]
    for name in ("UID", "DTSTART", "ORGANIZER"):
        if name not in event:
            raise MeetingError(f"the request's VEVENT has no {name}; it cannot be answered")
    _parse_errors(event)
    sequence_number(event)
    check_start_year(event)
    if str(event.get("STATUS", "")).upper() == "CANCELLED":
        raise MeetingError(f"the request {event['UID']} is cancelled (STATUS:CANCELLED)")
    if attendee is not None:
        if calendar_address(event["ORGANIZER"]) == calendar_address(attendee):
            raise MeetingError(
                f"{calendar_address(attendee)} is the organiser of {event['UID']}, not an invitee"
            )
        if find_attendee(event, attendee) is None:
            raise MeetingError(
                f"{calendar_address(attendee)} is not among the attendees of {event['UID']}"
            )
    return event


def unknown_time_zones(event: icalendar.Event) -> dict[str, str]:
    """Time properties whose ``TZID`` is neither defined in the data nor a known zone.

    icalendar resolves a ``TZID`` from the calendar's ``VTIMEZONE`` or the IANA database;
    an unresolved one leaves the time without a zone.

    Returns
    -------
    dict
        Property name → unresolved ``TZID``.

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", dt.datetime(2026, 11, 24, 14, tzinfo=dt.timezone.utc))
    >>> unknown_time_zones(event)
    {}
    """
    unknown = {}
    for name in TIME_PROPERTIES:
        if name not in event:
            continue
        tzid = event[name].params.get("TZID")
        value = event.decoded(name)
        if tzid and isinstance(value, dt.datetime) and value.tzinfo is None:
            unknown[name] = str(tzid)
    return unknown


def _as_local(value: dt.date | dt.datetime, zone: dt.tzinfo) -> dt.datetime | None:
    """A timed value in ``zone``; None for a date (all-day). Floating times are local."""
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=zone)
    return value.astimezone(zone)


def event_times(
    component: icalendar.Event, zone: dt.tzinfo
) -> tuple[dt.datetime, dt.datetime] | None:
    """Start and end of a timed event in ``zone``; None for an all-day event.

    The end is ``DTEND``, else ``DTSTART + DURATION``, else the start (RFC 5545 §3.6.1).

    Raises
    ------
    MeetingError
        No ``DTSTART``, a value that cannot be decoded, or an end before the start.

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", dt.datetime(2026, 11, 24, 13, tzinfo=dt.timezone.utc))
    >>> event.add("DTEND", dt.datetime(2026, 11, 24, 14, tzinfo=dt.timezone.utc))
    >>> start, end = event_times(event, dt.timezone(dt.timedelta(hours=1)))
    >>> start.isoformat(), end.isoformat()
    ('2026-11-24T14:00:00+01:00', '2026-11-24T15:00:00+01:00')
    """
    uid = component.get("UID", "(no UID)")
    if "DTSTART" not in component:
        raise MeetingError(f"event {uid} has no DTSTART")
    start_value = component.decoded("DTSTART")
    if not isinstance(start_value, dt.date):
        raise MeetingError(f"event {uid}: DTSTART {start_value!r} is not a date or date-time")
    start = _as_local(start_value, zone)
    if start is None:
        return None
    if "DTEND" in component:
        end_value = component.decoded("DTEND")
        if not isinstance(end_value, dt.datetime):
            raise MeetingError(
                f"event {uid}: DTEND {component['DTEND'].to_ical().decode()!r} is not a "
                "date-time like its DTSTART"
            )
        end = _as_local(end_value, zone)
    elif "DURATION" in component:
        duration = component.decoded("DURATION")
        if not isinstance(duration, dt.timedelta):
            raise MeetingError(f"event {uid}: DURATION {str(duration)!r} is not a duration")
        end = start + duration
    else:
        end = start
    if end < start:
        raise MeetingError(f"event {uid} ends before it starts")
    return start, end
