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
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
import recurring_ical_events

from clusterednb.exceptions import CNBError
from clusterednb.meeting.features import IMPORTANCE, MEETING_FEATURES

WORKDAY = (dt.time(8, 0), dt.time(18, 0))
MIDDAY = dt.time(13, 0)
BACK_TO_BACK = dt.timedelta(minutes=30)
_LOOKAROUND = dt.timedelta(days=9)


class MeetingError(CNBError):
    """A meeting request, calendar or directory that cannot be read; names the problem."""


@dataclass(frozen=True)
class UserEntry:
    """One user's part of the directory.

    Attributes
    ----------
    email : str
    timezone : str
        IANA name, e.g. ``"America/New_York"``.
    site : str
        The user's own site; a location containing it (case-insensitive) is "local".
    relations : dict of str to str
        Email → relation to this user (``MEETING_FEATURES["invitee_relation"]`` values).
    topics : dict of str to str
        Keyword → importance to this user (``IMPORTANCE`` values).
    """

    email: str
    timezone: str
    site: str
    relations: dict[str, str] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Directory:
    """People's jobs and, per user, relations, topic importances, site and time zone.

    The JSON form is ``{"people": {email: {"job": ...}}, "users": {user_id: {"email",
    "timezone", "site", "relations": {email: relation}, "topics": {keyword: importance}}}}``.
    """

    jobs: dict[str, str]
    users: dict[str, UserEntry]

    @classmethod
    def from_json(cls, path: str | Path) -> Directory:
        """Read and validate a directory file (a :class:`MeetingError` names any bad entry)."""
        try:
            raw = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise MeetingError(f"cannot read directory {path}: {error}") from error
        try:
            jobs = {email.lower(): entry["job"] for email, entry in raw.get("people", {}).items()}
            users = {
                str(user): UserEntry(
                    email=entry["email"].lower(),
                    timezone=entry["timezone"],
                    site=entry["site"],
                    relations={k.lower(): v for k, v in entry.get("relations", {}).items()},
                    topics=dict(entry.get("topics", {})),
                )
                for user, entry in raw["users"].items()
            }
        except (KeyError, AttributeError, TypeError) as error:
            raise MeetingError(f"directory {path}: missing or malformed entry {error}") from error
        directory = cls(jobs, users)
        directory.validate()
        return directory

    def to_json(self, path: str | Path) -> None:
        """Write the directory as JSON."""
        users = {
            user: {
                "email": entry.email,
                "timezone": entry.timezone,
                "site": entry.site,
                "relations": entry.relations,
                "topics": entry.topics,
            }
            for user, entry in self.users.items()
        }
        people = {email: {"job": job} for email, job in self.jobs.items()}
        Path(path).write_text(json.dumps({"people": people, "users": users}, indent=1))

    def validate(self) -> None:
        """Raise :class:`MeetingError` naming any value outside the features' value sets."""
        jobs = MEETING_FEATURES["invitee_job"]
        for email, job in self.jobs.items():
            if job not in jobs:
                raise MeetingError(f"directory: job {job!r} of {email} is not one of {jobs}")
        relations = MEETING_FEATURES["invitee_relation"]
        for user, entry in self.users.items():
            try:
                ZoneInfo(entry.timezone)
            except (ZoneInfoNotFoundError, ValueError) as error:
                raise MeetingError(
                    f"directory: user {user} has unknown time zone {entry.timezone!r}"
                ) from error
            for email, relation in entry.relations.items():
                if relation not in relations:
                    raise MeetingError(
                        f"directory: relation {relation!r} of {email} to {user} is not one of "
                        f"{relations}"
                    )
            for keyword, level in entry.topics.items():
                if level not in IMPORTANCE:
                    raise MeetingError(
                        f"directory: topic {keyword!r} of {user} has importance {level!r}, not "
                        f"one of {IMPORTANCE}"
                    )

    def user(self, user: str) -> UserEntry:
        """The entry of ``user``; :class:`MeetingError` if absent."""
        if user not in self.users:
            raise MeetingError(f"user {user!r} is not in the directory")
        return self.users[user]


@dataclass(frozen=True)
class _Event:
    uid: str
    start: dt.datetime
    end: dt.datetime
    importance: str
    location: str
    people: frozenset[str]
    recurrence: str  # "one time", "occasionally", "regularly"


def read_calendar(source: str | Path | bytes) -> icalendar.Calendar:
    """Parse an ``.ics`` file (path) or its bytes; :class:`MeetingError` when malformed."""
    try:
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
    except OSError as error:
        raise MeetingError(f"cannot read calendar {source}: {error}") from error
    try:
        return icalendar.Calendar.from_ical(data)
    except ValueError as error:
        raise MeetingError(f"{source!s:.80}: not valid iCalendar data ({error})") from error


def request_event(request: icalendar.Calendar) -> icalendar.Event:
    """The single ``VEVENT`` of a ``METHOD:REQUEST`` calendar."""
    method = str(request.get("METHOD", "")).upper()
    if method != "REQUEST":
        raise MeetingError(f"the request's METHOD is {method or 'missing'}, expected REQUEST")
    events = list(request.walk("VEVENT"))
    if len(events) != 1:
        raise MeetingError(f"a request must hold exactly one VEVENT, found {len(events)}")
    event = events[0]
    for name in ("UID", "DTSTART"):
        if name not in event:
            raise MeetingError(f"the request's VEVENT has no {name}")
    return event


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
    """The most important directory keyword in the summary or description ("other": none)."""
    text = f"{component.get('SUMMARY', '')} {component.get('DESCRIPTION', '')}".lower()
    found = [level for keyword, level in topics.items() if keyword.lower() in text]
    return max(found, key=IMPORTANCE.index) if found else "other"


def _people(component: icalendar.Event) -> frozenset[str]:
    attendees = component.get("ATTENDEE", [])
    attendees = attendees if isinstance(attendees, list) else [attendees]
    organizer = component.get("ORGANIZER")
    addresses = [*attendees, *([organizer] if organizer else [])]
    return frozenset(str(a).lower().removeprefix("mailto:") for a in addresses)


def _recurrence(master: icalendar.Event | None) -> str:
    if master is None or "RRULE" not in master:
        return "one time"
    rule = master["RRULE"]
    frequency = str(rule.get("FREQ", [""])[0]).upper()
    interval = int(rule.get("INTERVAL", [1])[0])
    if (frequency == "DAILY" and interval <= 7) or (frequency == "WEEKLY" and interval == 1):
        return "regularly"
    if frequency in ("HOURLY", "MINUTELY", "SECONDLY"):
        return "regularly"
    return "occasionally"


def _as_local(value: dt.date | dt.datetime, zone: ZoneInfo) -> dt.datetime | None:
    """A timed value in ``zone``; None for a date (all-day). Floating times are local."""
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=zone)
    return value.astimezone(zone)


def _event_times(
    component: icalendar.Event, zone: ZoneInfo
) -> tuple[dt.datetime, dt.datetime] | None:
    start = _as_local(component.decoded("DTSTART"), zone)
    if start is None:
        return None
    if "DTEND" in component:
        end = _as_local(component.decoded("DTEND"), zone)
    elif "DURATION" in component:
        end = start + component.decoded("DURATION")
    else:
        end = start
    if end is None or end < start:
        raise MeetingError(f"event {component.get('UID')} ends before it starts")
    return start, end


def _timed_events(
    calendar: icalendar.Calendar,
    around: dt.datetime,
    zone: ZoneInfo,
    topics: dict[str, str],
    skip_uid: str,
) -> list[_Event]:
    masters = {str(c.get("UID")): c for c in calendar.walk("VEVENT") if "RRULE" in c}
    try:
        occurrences = recurring_ical_events.of(calendar).between(
            around - _LOOKAROUND, around + _LOOKAROUND
        )
    except Exception as error:  # the expander raises several types on bad rules
        raise MeetingError(f"cannot expand the calendar's events: {error}") from error
    events = []
    for component in occurrences:
        uid = str(component.get("UID", ""))
        if uid == skip_uid or str(component.get("STATUS", "")).upper() == "CANCELLED":
            continue
        if str(component.get("TRANSP", "OPAQUE")).upper() == "TRANSPARENT":
            continue
        times = _event_times(component, zone)
        if times is None:
            continue
        events.append(
            _Event(
                uid=uid,
                start=times[0],
                end=times[1],
                importance=_importance(component, topics),
                location=str(component.get("LOCATION", "")),
                people=_people(component),
                recurrence=_recurrence(masters.get(uid)),
            )
        )
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
        ``METHOD:REQUEST`` with one ``VEVENT``.
    calendar : icalendar.Calendar
        The user's calendar.
    directory : Directory
    user : str

    Returns
    -------
    dict
        Feature name → value (in :data:`~clusterednb.meeting.features.FEATURE_NAMES` order).
    """
    entry = directory.user(user)
    zone = ZoneInfo(entry.timezone)
    event = request_event(request)
    times = _event_times(event, zone)
    if times is None:
        raise MeetingError("the request is an all-day event; a meeting needs a start time")
    start, end = times
    minutes = (end - start).total_seconds() / 60
    organizer = str(event.get("ORGANIZER", "")).lower().removeprefix("mailto:")
    events = _timed_events(calendar, start, zone, entry.topics, str(event["UID"]))

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
    new_local = _is_local(str(event.get("LOCATION", "")), entry.site)
    old = (
        "none"
        if not previous
        else "local"
        if _is_local(previous[-1].location, entry.site)
        else "away"
    )
    return {
        "start_time": _start_time(start.hour),
        "duration": _bin(minutes, (15, 30, 60), ("15", "30", "60", "longer")),
        "message_importance": _importance(event, {}),
        "topic_importance": topic_importance(event, entry.topics),
        "invitee_job": directory.jobs.get(organizer, "other"),
        "invitee_relation": entry.relations.get(organizer, "other"),
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
        "location": f"{'local' if new_local else 'away'}-{old}",
    }


def make_reply(
    request: icalendar.Calendar, attendee: str, accept: bool, stamp: dt.datetime
) -> icalendar.Calendar:
    """An RFC 5545 ``METHOD:REPLY`` answering ``request`` for ``attendee``.

    Parameters
    ----------
    request : icalendar.Calendar
    attendee : str
        The user's email address.
    accept : bool
        ``PARTSTAT=ACCEPTED`` or ``DECLINED``.
    stamp : datetime
        ``DTSTAMP`` of the reply (aware; passed in so replies are reproducible).
    """
    event = request_event(request)
    reply = icalendar.Calendar()
    reply.add("PRODID", "-//clusterednb//meeting assistant//EN")
    reply.add("VERSION", "2.0")
    reply.add("METHOD", "REPLY")
    answer = icalendar.Event()
    answer.add("UID", str(event["UID"]))
    answer.add("SEQUENCE", int(event.get("SEQUENCE", 0)))
    answer.add("DTSTAMP", stamp)
    answer["DTSTART"] = event["DTSTART"]
    if "DTEND" in event:
        answer["DTEND"] = event["DTEND"]
    if "ORGANIZER" in event:
        answer["ORGANIZER"] = event["ORGANIZER"]
    if "SUMMARY" in event:
        answer["SUMMARY"] = event["SUMMARY"]
    address = icalendar.vCalAddress(f"mailto:{attendee}")
    address.params["PARTSTAT"] = "ACCEPTED" if accept else "DECLINED"
    answer.add("ATTENDEE", address)
    reply.add_component(answer)
    return reply


def ics_bytes(calendar: icalendar.Calendar) -> bytes:
    """Serialise a calendar."""
    return calendar.to_ical()
