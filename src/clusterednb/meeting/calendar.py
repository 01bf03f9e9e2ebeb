"""The 15 features of a meeting request computed from iCalendar data.

Inputs: the request (``METHOD:REQUEST``, one ``VEVENT``), the user's calendar (recurring
events are expanded with ``recurring_ical_events``; time zones come from the events'
``TZID``), and a :class:`Directory`. Definitions of every value are in
:mod:`clusterednb.meeting.features`; the conventions used here:

- Everything is measured in the user's time zone (``Directory`` gives it).
- Only timed, opaque events occupy time: all-day events (``DATE`` values) and events with
  ``TRANSP:TRANSPARENT`` never make a conflict, a busy day or a back-to-back slot.
  Cancelled events (``STATUS:CANCELLED``) are ignored altogether.
- An event's importance is its ``PRIORITY`` (1 → critical, 2–3 very important, 4 important,
  5 possibly important, 6–9 unimportant); without one, the most important topic keyword
  of the user's directory found in its summary or description; else "other".
- A calendar event with the request's ``UID`` is the request itself and is ignored.
- One bad event of the user's calendar (no ``DTSTART``, an undecodable value, a rule the
  expander refuses, mixed date and date-time) is skipped with a :class:`MeetingWarning`
  naming its ``UID`` and the reason; the features come from the rest.
- A request time whose ``TZID`` is neither defined by a ``VTIMEZONE`` in the request nor a
  known IANA zone is read in the user's own zone, with a :class:`MeetingWarning`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

from clusterednb.exceptions import warn_at_caller
from clusterednb.meeting.directory import Directory, UserEntry
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.meeting.features import FEATURE_NAMES, IMPORTANCE
from clusterednb.meeting.invitation import (
    calendar_address,
    event_times,
    request_event,
    unknown_time_zones,
)

WORKDAY = (dt.time(8, 0), dt.time(18, 0))
MIDDAY = dt.time(13, 0)
BACK_TO_BACK = dt.timedelta(minutes=30)
_LOOKAROUND = dt.timedelta(days=9)


@dataclass(frozen=True)
class _Event:
    uid: str
    start: dt.datetime
    end: dt.datetime
    importance: str
    location: str
    people: frozenset[str]
    recurrence: str  # "one time", "occasionally", "regularly"


def _importance(component: icalendar.Event, topics: dict[str, str]) -> str:
    priority = component.get("PRIORITY")
    if priority is not None:
        try:
            value = int(priority)
        except ValueError as error:
            raise MeetingError(f"PRIORITY {priority!r} is not an integer") from error
        if value == 1:
            return "critical"
        if value in (2, 3):
            return "very important"
        if value == 4:
            return "important"
        if value == 5:
            return "possibly important"
        if 6 <= value <= 9:
            return "unimportant"
    return topic_importance(component, topics)


def topic_importance(component: icalendar.Event, topics: dict[str, str]) -> str:
    """The most important directory keyword in the summary or description ("other": none).

    Examples
    --------
    >>> event = icalendar.Event()
    >>> event.add("SUMMARY", "Budget review")
    >>> topics = {"budget": "important", "review": "unimportant"}
    >>> topic_importance(event, topics), topic_importance(event, {"hiring": "critical"})
    ('important', 'other')
    """
    text = f"{component.get('SUMMARY', '')} {component.get('DESCRIPTION', '')}".lower()
    found = [level for keyword, level in topics.items() if keyword.lower() in text]
    return max(found, key=IMPORTANCE.index) if found else "other"


def _people(component: icalendar.Event) -> frozenset[str]:
    attendees = component.get("ATTENDEE", [])
    attendees = attendees if isinstance(attendees, list) else [attendees]
    organizer = component.get("ORGANIZER")
    addresses = [*attendees, *([organizer] if organizer else [])]
    return frozenset(calendar_address(a) for a in addresses)


def _first(value: object) -> object:
    """A recurrence rule part: a list when parsed from text, a scalar when built in code."""
    return value[0] if isinstance(value, list | tuple) else value


def _recurrence(master: icalendar.Event | None) -> str:
    if master is None or "RRULE" not in master:
        return "one time"
    rule = master["RRULE"]
    frequency = str(_first(rule.get("FREQ", ""))).upper()
    interval = int(_first(rule.get("INTERVAL", 1)))
    if (frequency == "DAILY" and interval <= 7) or (frequency == "WEEKLY" and interval == 1):
        return "regularly"
    if frequency in ("HOURLY", "MINUTELY", "SECONDLY"):
        return "regularly"
    return "occasionally"


def _skip(uid: str, reason: object) -> None:
    warn_at_caller(f"calendar event {uid} skipped: {reason}", MeetingWarning)


def _occurrences(
    calendar: icalendar.Calendar, start: dt.datetime, end: dt.datetime
) -> Iterator[icalendar.Event]:
    """Occurrences between ``start`` and ``end``; an event the expander refuses is skipped.

    The whole calendar is expanded at once; if the expander refuses it, each ``UID`` (with
    its overridden instances and the calendar's time zones) is expanded alone, so one bad
    event costs only itself.
    """
    try:
        yield from recurring_ical_events.of(calendar).between(start, end)
        return
    except Exception:
        pass
    zones = list(calendar.walk("VTIMEZONE"))
    by_uid: dict[str, list[icalendar.Event]] = {}
    for index, component in enumerate(calendar.walk("VEVENT")):
        by_uid.setdefault(str(component.get("UID", f"(no UID, event {index + 1})")), []).append(
            component
        )
    for uid, components in by_uid.items():
        if any("DTSTART" not in c for c in components):
            _skip(uid, "it has no DTSTART")
            continue
        single = icalendar.Calendar()
        for component in (*zones, *components):
            single.add_component(component)
        try:
            found = list(recurring_ical_events.of(single).between(start, end))
        except Exception as error:
            _skip(uid, f"its dates or recurrence cannot be expanded ({error!r})")
            continue
        yield from found


def _timed_events(
    calendar: icalendar.Calendar,
    around: dt.datetime,
    zone: ZoneInfo,
    topics: dict[str, str],
    skip_uid: str,
) -> list[_Event]:
    masters = {str(c.get("UID")): c for c in calendar.walk("VEVENT") if "RRULE" in c}
    events = []
    for component in _occurrences(calendar, around - _LOOKAROUND, around + _LOOKAROUND):
        uid = str(component.get("UID", ""))
        if uid == skip_uid or str(component.get("STATUS", "")).upper() == "CANCELLED":
            continue
        if str(component.get("TRANSP", "OPAQUE")).upper() == "TRANSPARENT":
            continue
        try:
            times = event_times(component, zone)
            if times is None:
                continue
            event = _Event(
                uid=uid,
                start=times[0],
                end=times[1],
                importance=_importance(component, topics),
                location=str(component.get("LOCATION", "")),
                people=_people(component),
                recurrence=_recurrence(masters.get(uid)),
            )
        except (MeetingError, ValueError, TypeError) as error:
            _skip(uid or "(no UID)", error)
            continue
        events.append(event)
    return sorted(events, key=lambda e: e.start)


def _bin(value: float, edges: tuple[float, ...], labels: tuple[str, ...]) -> str:
    """The first label whose edge is at least ``value``; the last label beyond them."""
    for edge, label in zip(edges, labels, strict=False):
        if value <= edge:
            return label
    return labels[-1]


def _days_bin(days: int | None) -> str:
    if days is None:
        return "more"
    return _bin(days, (0, 1, 3, 7), ("0", "1", "3", "7", "more"))


def _start_time(hour: int) -> str:
    """early < 9:00 ≤ morning < 12:00 ≤ mid < 14:00 ≤ afternoon < 17:00 ≤ late."""
    for limit, label in ((9, "early"), (12, "morning"), (14, "mid"), (17, "afternoon")):
        if hour < limit:
            return label
    return "late"


def _booked_minutes(events: list[_Event], start: dt.datetime, end: dt.datetime) -> float:
    """Minutes of ``[start, end)`` covered by the union of the events."""
    covered, cursor = 0.0, start
    for event in events:
        lo, hi = max(event.start, cursor), min(event.end, end)
        if hi > lo:
            covered += (hi - lo).total_seconds() / 60
            cursor = hi
    return covered


def _load(share: float, neighbours: bool) -> str:
    first = "light" if share < 1 / 3 else "busy" if share <= 2 / 3 else "booked"
    return f"{first}-{'busy' if neighbours else 'free'}"


def _is_local(location: str, site: str) -> bool:
    return not location.strip() or site.lower() in location.lower()


def extract_features(
    request: icalendar.Calendar,
    calendar: icalendar.Calendar,
    directory: Directory,
    user: str,
) -> dict[str, str]:
    """The 15 feature values of a meeting request for ``user``.

    Parameters
    ----------
    request : icalendar.Calendar
        ``METHOD:REQUEST`` (or no ``METHOD``) with one ``VEVENT`` inviting ``user``
        (checked by :func:`~clusterednb.meeting.invitation.request_event`).
    calendar : icalendar.Calendar
        The user's calendar.
    directory : Directory
    user : str

    Returns
    -------
    dict
        Feature name → value (in :data:`~clusterednb.meeting.features.FEATURE_NAMES` order).

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> request, calendar, directory = toy.pending()
    >>> features = extract_features(request, calendar, directory, "user00")
    >>> len(features), features["conflict"] in ("no", "yes")
    (15, True)
    """
    entry = directory.user(user)
    return features_in_context(request, entry.email, calendar, entry, directory.jobs)[0]


def features_in_context(
    request: icalendar.Calendar,
    email: str,
    calendar: icalendar.Calendar | None,
    entry: UserEntry | None,
    jobs: dict[str, str],
) -> tuple[dict[str, str | None], list[str]]:
    """The features that the available context determines; the others are missing.

    Missing context is not an error: without the user's calendar, the features read from it
    (``invitee_recent``, ``invitee_soon``, the day's load, the free slot, the conflict
    features and where the user is before) are missing; without the user's directory entry,
    the topic's importance, the requester's relation and the meeting's place are missing, and
    times are read in the request's own time zone. A missing value contributes no factor to
    the prediction (the models marginalise it).

    Parameters
    ----------
    request : icalendar.Calendar
        The invitation (checked for ``email`` by
        :func:`~clusterednb.meeting.invitation.request_event`).
    email : str
        The user's address.
    calendar : icalendar.Calendar or None
    entry : UserEntry or None
        The user's directory entry.
    jobs : dict
        Email → job (the directory's people; may be empty).

    Returns
    -------
    features : dict
        Feature name → value, None where missing.
    missing : list of str
        The names of the missing features.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> request, calendar, directory = toy.pending()
    >>> email = directory.user("user00").email
    >>> features, missing = features_in_context(request, email, None, None, {})
    >>> "conflict" in missing, features["conflict"], features["duration"]  # no calendar given
    (True, None, '60')
    """
    event = request_event(request, email)
    zone = ZoneInfo(entry.timezone) if entry else _request_zone(event)
    for name, tzid in unknown_time_zones(event).items():
        warn_at_caller(
            f"the request's {name} uses time zone {tzid!r}, which neither a VTIMEZONE of the "
            f"request nor the IANA database defines; read in the user's zone {zone.key}",
            MeetingWarning,
        )
    times = event_times(event, zone)
    if times is None:
        raise MeetingError("the request is an all-day event; a meeting needs a start time")
    start, end = times
    organizer = calendar_address(event["ORGANIZER"])
    features: dict[str, str | None] = {
        "start_time": _start_time(start.hour),
        "duration": _bin(
            (end - start).total_seconds() / 60, (15, 30, 60), ("15", "30", "60", "longer")
        ),
        "message_importance": _importance(event, {}),
        "topic_importance": topic_importance(event, entry.topics) if entry else None,
        "invitee_job": jobs.get(organizer, "other"),
        "invitee_relation": entry.relations.get(organizer, "other") if entry else None,
    }
    if calendar is not None:
        topics = entry.topics if entry else {}
        events = _timed_events(calendar, start, zone, topics, str(event["UID"]))
        features.update(_calendar_features(event, events, start, end, zone, organizer, entry))
    features = {name: features.get(name) for name in FEATURE_NAMES}
    return features, [name for name, value in features.items() if value is None]


def _request_zone(event: icalendar.Event) -> ZoneInfo:
    """The zone of the request's own start (UTC for a floating or unknown one)."""
    start = event.decoded("DTSTART")
    key = getattr(getattr(start, "tzinfo", None), "key", None)
    return ZoneInfo(key) if key else ZoneInfo("UTC")


def _calendar_features(
    event: icalendar.Event,
    events: list[_Event],
    start: dt.datetime,
    end: dt.datetime,
    zone: ZoneInfo,
    organizer: str,
    entry: UserEntry | None,
) -> dict[str, str | None]:
    """The features read from the user's own calendar."""
    day = start.date()
    work_start = dt.datetime.combine(day, WORKDAY[0], zone)
    work_end = dt.datetime.combine(day, WORKDAY[1], zone)
    midday = dt.datetime.combine(day, MIDDAY, zone)
    half = (work_start, midday) if start < midday else (midday, work_end)
    conflicts = [e for e in events if e.start < end and e.end > start]
    neighbours = any(
        e.end > start - BACK_TO_BACK and e.start < end + BACK_TO_BACK and e not in conflicts
        for e in events
    )
    before = [e.end for e in events if e.end <= start and e.end.date() == day]
    after = [e.start for e in events if e.start >= end and e.start.date() == day]
    free_before = max((start - max([work_start, *before])).total_seconds() / 60, 0.0)
    free_after = max((min([work_end, *after]) - end).total_seconds() / 60, 0.0)
    free = 0.0 if conflicts else free_before + free_after
    with_requester = [e for e in events if organizer and organizer in e.people]
    past = [e for e in with_requester if e.end <= start]
    future = [e for e in with_requester if e.start >= end]
    worst = max(conflicts, key=lambda e: IMPORTANCE.index(e.importance), default=None)
    previous = [e for e in events if e.end <= start and e.start.date() == day]
    location = None
    if entry is not None:
        new_local = _is_local(str(event.get("LOCATION", "")), entry.site)
        old = (
            "none"
            if not previous
            else "local"
            if _is_local(previous[-1].location, entry.site)
            else "away"
        )
        location = f"{'local' if new_local else 'away'}-{old}"
    return {
        "invitee_recent": _days_bin((day - past[-1].start.date()).days if past else None),
        "invitee_soon": _days_bin((future[0].start.date() - day).days if future else None),
        "busy_fday": _load(_booked_minutes(events, work_start, work_end) / 600, neighbours),
        "busy_hday": _load(
            _booked_minutes(events, *half) / ((half[1] - half[0]).total_seconds() / 60),
            neighbours,
        ),
        "free_slot_time": _bin(
            free, (0, 15, 30, 60, 90, 135), ("0", "15", "30", "60", "90", "135", "more")
        ),
        "conflict": "yes" if conflicts else "no",
        "conflict_importance": "other" if worst is None else worst.importance,
        "conflict_frequency": "other" if worst is None else worst.recurrence,
        "location": location,
    }
