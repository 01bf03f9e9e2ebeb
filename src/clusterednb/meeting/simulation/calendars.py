"""iCalendar side of the simulated organisation: a directory, calendars, pending requests.

The simulated requests in ``requests.csv`` are drawn feature by feature; this module gives
the same users a world to run the assistant in: a :class:`Directory` (emails, time zones,
sites, relations, topic keywords), a calendar per user for the week of ``reference`` (weekly
recurring meetings, one-off meetings with colleagues, an all-day event, in the user's time
zone) and a few pending ``METHOD:REQUEST`` invitations per user, whose 15 features are then
computed by :func:`clusterednb.meeting.calendar.extract_features` like any real request's.
Both carry a ``VTIMEZONE`` for every ``TZID`` they use (RFC 5545 §3.2.19).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import numpy as np

from clusterednb.meeting.directory import Directory, UserEntry
from clusterednb.meeting.features import IMPORTANCE, MEETING_FEATURES
from clusterednb.meeting.rules import now

FIRST_WEEK = dt.date(2026, 11, 2)  # a Monday
STAMP_BEFORE = dt.timedelta(days=32)  # invitations were sent 32 days before the week


def reference_week() -> dt.date:
    """The Monday of the simulated week: 2 November 2026, or, once that week has begun by
    :func:`~clusterednb.meeting.rules.now`, the first Monday after now, so that the pending
    invitations are always ahead (the assistant never answers a meeting that has ended).
    Everything moves by whole weeks, so the features (weekday, local hour, conflicts, lead
    time) stay the same; only around a daylight-saving change that the time zones make on
    different dates can an hour seen from another zone differ.

    Examples
    --------
    >>> from clusterednb.meeting.rules import clock_at
    >>> with clock_at("2026-11-01T12:00:00+00:00"):
    ...     reference_week().isoformat()
    '2026-11-02'
    >>> with clock_at("2026-11-26T12:00:00+00:00"):  # a Thursday three weeks later
    ...     reference_week().isoformat()
    '2026-11-30'

    """
    today = now().date()
    if today < FIRST_WEEK:
        return FIRST_WEEK
    return FIRST_WEEK + dt.timedelta(weeks=(today - FIRST_WEEK).days // 7 + 1)


def _stamp() -> dt.datetime:
    """When the simulated invitations were sent (DTSTAMP)."""
    sent = reference_week() - STAMP_BEFORE
    return dt.datetime(sent.year, sent.month, sent.day, tzinfo=dt.UTC)


_ZONES = {"military": "America/Los_Angeles", "academic": "America/New_York"}
_SITES = {"military": "Fort Ord", "academic": "Campus", "research lab": "Building 32"}
_TOPICS = ("budget", "exercise", "proposal", "seminar", "review", "lunch", "training", "thesis")
_JOBS = MEETING_FEATURES["invitee_job"][1:]
_RELATIONS = MEETING_FEATURES["invitee_relation"][1:]


def email_of(user: str) -> str:
    """The simulated user's email address.

    Examples
    --------
    >>> email_of("user07")
    'user07@org.example'
    """
    return f"{user}@org.example"


def make_directory(rng: np.random.Generator, users: list[str], roles: list[str]) -> Directory:
    """Jobs for every user and a few outside people; relations and topics per user.

    Examples
    --------
    >>> directory = make_directory(np.random.default_rng(0), ["user00", "user01"],
    ...                            ["manager", "engineer"])
    >>> sorted(directory.users), directory.user("user00").email
    (['user00', 'user01'], 'user00@org.example')
    """
    outside = [f"guest{i}@outside.example" for i in range(6)]
    people = [*map(email_of, users), *outside]
    jobs = {email: str(rng.choice(_JOBS)) for email in people}
    entries = {}
    for user, role in zip(users, roles, strict=True):
        others = [p for p in people if p != email_of(user)]
        known = rng.choice(others, size=min(8, len(others)), replace=False)
        entries[user] = UserEntry(
            email=email_of(user),
            timezone=_ZONES.get(role, "America/Los_Angeles"),
            site=_SITES.get(role, "Building 32"),
            relations={str(p): str(rng.choice(_RELATIONS)) for p in known},
            topics={
                str(t): str(rng.choice(IMPORTANCE[1:]))
                for t in rng.choice(_TOPICS, size=4, replace=False)
            },
        )
    return Directory(jobs, entries)


def _event(
    uid: str,
    start: dt.datetime,
    minutes: int,
    summary: str,
    organizer: str,
    location: str,
    priority: int | None,
) -> icalendar.Event:
    event = icalendar.Event()
    event.add("UID", uid)
    event.add("DTSTAMP", _stamp())
    event.add("DTSTART", start)
    event.add("DTEND", start + dt.timedelta(minutes=minutes))
    event.add("SUMMARY", summary)
    event.add("ORGANIZER", f"mailto:{organizer}")
    event.add("LOCATION", location)
    if priority is not None:
        event.add("PRIORITY", priority)
    return event


def _calendar(method: str | None = None) -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("PRODID", "-//clusterednb//simulated organisation//EN")
    calendar.add("VERSION", "2.0")
    if method:
        calendar.add("METHOD", method)
    return calendar


def _slot(rng: np.random.Generator, zone: ZoneInfo, day: int) -> dt.datetime:
    date = reference_week() + dt.timedelta(days=day)
    hour, quarter = int(rng.integers(7, 18)), int(rng.integers(0, 4))
    return dt.datetime.combine(date, dt.time(hour, 15 * quarter), zone)


def _place(rng: np.random.Generator, site: str) -> str:
    return site if rng.random() < 0.7 else str(rng.choice(["Downtown", "Airport", "Hotel"]))


def make_calendar(rng: np.random.Generator, user: str, directory: Directory) -> icalendar.Calendar:
    """One user's calendar around the reference week.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> directory = make_directory(rng, ["user00"], ["manager"])
    >>> calendar = make_calendar(rng, "user00", directory)
    >>> len(calendar.walk("VEVENT")) >= 8, any("RRULE" in e for e in calendar.walk("VEVENT"))
    (True, True)
    """
    entry = directory.user(user)
    zone = ZoneInfo(entry.timezone)
    contacts = list(entry.relations) or [entry.email]
    calendar = _calendar()
    for i in range(int(rng.integers(2, 5))):  # weekly or fortnightly recurring meetings
        start = _slot(rng, zone, int(rng.integers(-14, -7)))
        event = _event(
            f"{user}-weekly-{i}",
            start,
            int(rng.choice([30, 60])),
            f"{rng.choice(_TOPICS)} meeting",
            str(rng.choice(contacts)),
            _place(rng, entry.site),
            int(rng.integers(1, 10)),
        )
        event.add("RRULE", {"FREQ": "WEEKLY", "INTERVAL": int(rng.choice([1, 1, 2]))})
        calendar.add_component(event)
    for i in range(int(rng.integers(6, 14))):  # one-off meetings in and around the week
        calendar.add_component(
            _event(
                f"{user}-once-{i}",
                _slot(rng, zone, int(rng.integers(-7, 12))),
                int(rng.choice([15, 30, 60, 90])),
                str(rng.choice(_TOPICS)),
                str(rng.choice(contacts)),
                _place(rng, entry.site),
                None if rng.random() < 0.5 else int(rng.integers(1, 10)),
            )
        )
    holiday = icalendar.Event()
    holiday.add("UID", f"{user}-allday")
    holiday.add("DTSTAMP", _stamp())
    holiday.add("DTSTART", reference_week() + dt.timedelta(days=int(rng.integers(0, 5))))
    holiday.add("SUMMARY", "all-day reminder")
    calendar.add_component(holiday)
    calendar.add_missing_timezones()
    return calendar


def make_request(
    rng: np.random.Generator, user: str, directory: Directory, index: int
) -> icalendar.Calendar:
    """A pending ``METHOD:REQUEST`` invitation to ``user`` in the reference week.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> directory = make_directory(rng, ["user00"], ["manager"])
    >>> request = make_request(rng, "user00", directory, 0)
    >>> event = request.walk("VEVENT")[0]
    >>> str(request["METHOD"]), str(event["UID"]), event["ATTENDEE"].params["PARTSTAT"]
    ('REQUEST', 'user00-pending-0@org.example', 'NEEDS-ACTION')
    """
    entry = directory.user(user)
    zone = ZoneInfo(entry.timezone)
    people = [p for p in directory.jobs if p != entry.email]
    organizer = str(rng.choice(list(entry.relations) if rng.random() < 0.7 else people))
    request = _calendar("REQUEST")
    event = _event(
        f"{user}-pending-{index}@org.example",
        _slot(rng, zone, int(rng.integers(0, 5))),
        int(rng.choice([15, 30, 60, 120])),
        f"{rng.choice(_TOPICS)} discussion",
        organizer,
        _place(rng, entry.site),
        None if rng.random() < 0.3 else int(rng.integers(1, 10)),
    )
    event.add("SEQUENCE", 0)
    attendee = icalendar.vCalAddress(f"mailto:{entry.email}")
    attendee.params["PARTSTAT"] = "NEEDS-ACTION"
    event.add("ATTENDEE", attendee)
    request.add_component(event)
    request.add_missing_timezones()
    return request


def write_world(
    rng: np.random.Generator,
    folder: str | Path,
    users: list[str],
    roles: list[str],
    n_pending: int = 3,
) -> Directory:
    """Write ``directory.json``, ``calendars/USER.ics`` and ``pending/USER/*.ics`` into
    ``folder`` (created if absent) and return the directory.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> folder = toy.scratch_file("world")
    >>> directory = write_world(np.random.default_rng(0), folder, ["ann"], ["academic"], 1)
    >>> sorted(str(p.relative_to(folder)) for p in folder.rglob("*.*"))
    ['calendars/ann.ics', 'directory.json', 'pending/ann/request-0.ics']
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    directory = make_directory(rng, users, roles)
    directory.to_json(folder / "directory.json")
    (folder / "calendars").mkdir(parents=True, exist_ok=True)
    for user in users:
        (folder / "calendars" / f"{user}.ics").write_bytes(
            make_calendar(rng, user, directory).to_ical()
        )
        pending = folder / "pending" / user
        pending.mkdir(parents=True, exist_ok=True)
        for index in range(n_pending):
            (pending / f"request-{index}.ics").write_bytes(
                make_request(rng, user, directory, index).to_ical()
            )
    return directory
