"""A person's own rules, applied before the model: the past, out of office, working hours.

Every calendar auto-responder has them, and no model should overrule them:

- **the past**: an invitation whose meeting has ended (its ``DTEND``, or ``DTSTART`` plus
  ``DURATION``, or its start) is never answered; it is "expired". The clock is the system's,
  or the ISO date-time in the environment variable ``CNB_NOW`` (tests and demonstrations);
- **out of office**: an invitation that starts on a day of an out-of-office period (first and
  last day included, in the person's time zone) gets ``while_away`` ("decline" by default,
  or "ask");
- **working hours**: an invitation that starts on a day that is not a working day, or starts
  before the hours begin or ends after they end (in the person's time zone), gets
  ``outside_hours`` ("ask" by default, or "decline"). No working hours: no such rule.

What an "ask" does on the calendar (``on_ask``: leave it waiting, or answer TENTATIVE) and an
optional sentence in every reply (``comment``, RFC 5546 ``COMMENT``) are the person's choices
too, and are kept with the rules. A rule's decision says why in words, as a reason.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clusterednb.meeting.deciding import Decision
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.explain import Reason

NOW_VARIABLE = "CNB_NOW"
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
OUTCOMES = ("decline", "ask")
ON_ASK = ("none", "tentative")
MAX_COMMENT = 500
_HOUR = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def now() -> dt.datetime:
    """The current time (UTC), or ``CNB_NOW`` when set.

    Examples
    --------
    >>> with clock_at("2026-11-02T09:00:00+00:00"):
    ...     now().isoformat()
    '2026-11-02T09:00:00+00:00'
    """
    fixed = os.environ.get(NOW_VARIABLE)
    if not fixed:
        return dt.datetime.now(dt.UTC)
    try:
        when = dt.datetime.fromisoformat(fixed)
    except ValueError as error:
        raise MeetingError(f"{NOW_VARIABLE}={fixed!r} is not an ISO date-time") from error
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


@contextmanager
def clock_at(when: str | None) -> Iterator[None]:
    """Within the block, :func:`now` is ``when`` (an ISO date-time; None: the system clock);
    ``CNB_NOW`` is restored after it.

    Examples
    --------
    >>> with clock_at(None):
    ...     now().year >= 2026
    True
    """
    before = os.environ.get(NOW_VARIABLE)
    if when is None:
        os.environ.pop(NOW_VARIABLE, None)
    else:
        os.environ[NOW_VARIABLE] = when
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NOW_VARIABLE, None)
        else:
            os.environ[NOW_VARIABLE] = before


def _aware(value: dt.date | dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """A start or end as an aware date-time (a date: its midnight; a floating time: ``zone``)."""
    if not isinstance(value, dt.datetime):
        return dt.datetime.combine(value, dt.time(), zone)
    return value if value.tzinfo else value.replace(tzinfo=zone)


def meeting_span(event: Any, zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """Start and end of a ``VEVENT`` as aware date-times (``zone`` for floating times).

    Examples
    --------
    >>> import icalendar
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", dt.datetime(2026, 11, 2, 9, tzinfo=dt.UTC))
    >>> event.add("DURATION", dt.timedelta(hours=1))
    >>> [t.hour for t in meeting_span(event, ZoneInfo("UTC"))]
    [9, 10]
    """
    start = _aware(event.decoded("DTSTART"), zone)
    if "DTEND" in event:
        return start, _aware(event.decoded("DTEND"), zone)
    if "DURATION" in event:
        return start, start + event.decoded("DURATION")
    whole_day = not isinstance(event.decoded("DTSTART"), dt.datetime)
    return start, start + (dt.timedelta(days=1) if whole_day else dt.timedelta())


def has_passed(event: Any, zone: ZoneInfo, when: dt.datetime | None = None) -> bool:
    """Whether the meeting has ended by ``when`` (default :func:`now`).

    Examples
    --------
    >>> import icalendar
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", dt.datetime(2026, 11, 2, 9, tzinfo=dt.UTC))
    >>> event.add("DTEND", dt.datetime(2026, 11, 2, 10, tzinfo=dt.UTC))
    >>> has_passed(event, ZoneInfo("UTC"), dt.datetime(2026, 11, 2, 9, 30, tzinfo=dt.UTC))
    False
    >>> has_passed(event, ZoneInfo("UTC"), dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC))
    True
    """
    return meeting_span(event, zone)[1] <= (when or now())


EXPIRED_REASON = Reason(
    "time", "passed", 0.0, "the meeting has already ended: it is never answered"
)


@dataclass(frozen=True)
class PersonRules:
    """One person's rules and reply choices (see the module).

    Attributes
    ----------
    time_zone : str
        IANA name, for working hours and out-of-office days.
    working_hours : tuple of (str, str), or None
        ``("09:00", "17:00")``; None: no working-hours rule.
    working_days : tuple of int
        0 = Monday … 6 = Sunday.
    outside_hours, while_away : {"decline", "ask"}
    out_of_office : tuple of (str, str)
        ISO first and last days of each period.
    on_ask : {"none", "tentative"}
    comment : str or None

    Examples
    --------
    >>> rules = PersonRules.from_dict({"time_zone": "Europe/London",
    ...                                "working_hours": ["09:00", "17:00"]})
    >>> rules.working_days, rules.outside_hours
    ((0, 1, 2, 3, 4), 'ask')
    >>> PersonRules.from_dict({"working_hours": ["17:00", "09:00"]})
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: working_hours: the start 17:00 must come before ...
    """

    time_zone: str = "UTC"
    working_hours: tuple[str, str] | None = None
    working_days: tuple[int, ...] = (0, 1, 2, 3, 4)
    outside_hours: str = "ask"
    out_of_office: tuple[tuple[str, str], ...] = ()
    while_away: str = "decline"
    on_ask: str = "none"
    comment: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PersonRules:
        """Rules from JSON-like data, every field checked (a :class:`MeetingError` names the
        first that is wrong); fields left out keep their defaults."""
        if not isinstance(data, dict):
            raise MeetingError("the settings must be a JSON object")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise MeetingError(
                f"unknown settings {unknown}; known: {sorted(cls.__dataclass_fields__)}"
            )
        merged = {**asdict(cls()), **data}
        zone = merged["time_zone"]
        try:
            ZoneInfo(str(zone))
        except (ZoneInfoNotFoundError, ValueError, OSError, TypeError) as error:
            raise MeetingError(f"time_zone: unknown time zone {zone!r}") from error
        hours = merged["working_hours"]
        if hours is not None:
            if not isinstance(hours, list | tuple) or len(hours) != 2:
                raise MeetingError('working_hours: give ["HH:MM", "HH:MM"] or null')
            for value in hours:
                if not isinstance(value, str) or not _HOUR.match(value):
                    raise MeetingError(f"working_hours: {value!r} is not a time HH:MM")
            if hours[0] >= hours[1]:
                raise MeetingError(
                    f"working_hours: the start {hours[0]} must come before the end {hours[1]}"
                )
            hours = (hours[0], hours[1])
        days = merged["working_days"]
        if not isinstance(days, list | tuple) or not all(_day_number(d) for d in days):
            raise MeetingError("working_days: give day numbers 0 (Monday) to 6 (Sunday)")
        days = [int(d) for d in days]
        for name, allowed in (
            ("outside_hours", OUTCOMES),
            ("while_away", OUTCOMES),
            ("on_ask", ON_ASK),
        ):
            if merged[name] not in allowed:
                raise MeetingError(f"{name}: one of {list(allowed)}, got {merged[name]!r}")
        periods = []
        if not isinstance(merged["out_of_office"], list | tuple):
            raise MeetingError('out_of_office: give a list of periods ["YYYY-MM-DD", "YYYY-MM-DD"]')
        for period in merged["out_of_office"]:
            if not isinstance(period, list | tuple) or len(period) != 2:
                raise MeetingError('out_of_office: give periods ["YYYY-MM-DD", "YYYY-MM-DD"]')
            try:
                first, last = (dt.date.fromisoformat(day) for day in period)
            except (TypeError, ValueError) as error:
                raise MeetingError(f"out_of_office: {list(period)} are not ISO dates") from error
            if first > last:
                raise MeetingError(f"out_of_office: {first} comes after {last}")
            periods.append((first.isoformat(), last.isoformat()))
        comment = merged["comment"]
        if comment is not None and (
            not isinstance(comment, str) or len(comment) > MAX_COMMENT or "\n" in comment
        ):
            raise MeetingError(f"comment: one line of at most {MAX_COMMENT} characters, or null")
        return cls(
            time_zone=str(zone),
            working_hours=hours,
            working_days=tuple(sorted(set(days))),
            outside_hours=merged["outside_hours"],
            out_of_office=tuple(periods),
            while_away=merged["while_away"],
            on_ask=merged["on_ask"],
            comment=comment or None,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (lists for tuples).

        Examples
        --------
        >>> PersonRules(out_of_office=(("2026-12-21", "2027-01-01"),)).to_dict()["out_of_office"]
        [['2026-12-21', '2027-01-01']]
        """
        data = asdict(self)
        data["working_hours"] = list(self.working_hours) if self.working_hours else None
        data["working_days"] = list(self.working_days)
        data["out_of_office"] = [list(period) for period in self.out_of_office]
        return data

    @property
    def zone(self) -> ZoneInfo:
        """The time zone."""
        return ZoneInfo(self.time_zone)

    def hours_in_words(self) -> str:
        """The working hours in words.

        Examples
        --------
        >>> PersonRules(working_hours=("09:00", "17:00")).hours_in_words()
        'Mon–Fri 09:00–17:00 (UTC)'
        """
        days = self.working_days
        contiguous = days == tuple(range(days[0], days[-1] + 1)) if days else False
        if contiguous and len(days) > 2:
            named = f"{DAYS[days[0]]}–{DAYS[days[-1]]}"
        else:
            named = ", ".join(DAYS[d] for d in days) or "no day"
        start, end = self.working_hours or ("00:00", "24:00")
        return f"{named} {start}–{end} ({self.time_zone})"


def _day_number(value: Any) -> bool:
    """Whether ``value`` is a day number 0 … 6 (an integer, or a float with an integer value as
    JSON may write it; not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and 0 <= value <= 6


def rule_decision(event: Any, rules: PersonRules) -> tuple[str, Reason] | None:
    """The decision and its reason that a rule gives an invitation's ``VEVENT``, before any
    model; None when no rule applies (the past is :func:`has_passed`'s).

    Examples
    --------
    >>> import icalendar
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", dt.datetime(2026, 11, 7, 10, tzinfo=dt.UTC))  # a Saturday
    >>> event.add("DTEND", dt.datetime(2026, 11, 7, 11, tzinfo=dt.UTC))
    >>> decision, reason = rule_decision(event, PersonRules(working_hours=("09:00", "17:00")))
    >>> decision, reason.words
    ('ask', 'outside your working hours (Mon–Fri 09:00–17:00 (UTC))')
    >>> away = PersonRules(out_of_office=(("2026-11-06", "2026-11-08"),))
    >>> rule_decision(event, away)[1].words
    'you are out of office from 2026-11-06 to 2026-11-08'
    """
    zone = rules.zone
    start, end = (moment.astimezone(zone) for moment in meeting_span(event, zone))
    for first, last in rules.out_of_office:
        if first <= start.date().isoformat() <= last:
            words = f"you are out of office from {first} to {last}"
            return rules.while_away, Reason("out of office", f"{first}–{last}", 0.0, words)
    if rules.working_hours is None:
        return None
    begin, finish = (dt.time.fromisoformat(t) for t in rules.working_hours)
    inside = (
        start.weekday() in rules.working_days
        and start.date() == end.date()
        and begin <= start.time()
        and end.time() <= finish
    )
    if inside:
        return None
    words = f"outside your working hours ({rules.hours_in_words()})"
    return rules.outside_hours, Reason("working hours", "outside", 0.0, words)


def decide_by_rules(
    event: Any, rules: PersonRules, features: dict[str, str | None] | None = None
) -> Decision | None:
    """The decision the rules give before any model: "expired" for a meeting that has ended
    (never answered), a rule's decision with its reason, or None (the model decides).

    Examples
    --------
    >>> import icalendar
    >>> event = icalendar.Event()
    >>> event.add("DTSTART", dt.datetime(2001, 1, 1, 9, tzinfo=dt.UTC))
    >>> decided = decide_by_rules(event, PersonRules())
    >>> decided.decision, decided.reasons[0].words
    ('expired', 'the meeting has already ended: it is never answered')
    """
    known = dict(features or {})
    if has_passed(event, rules.zone):
        return Decision("expired", reasons=(EXPIRED_REASON,), features=known)
    ruled = rule_decision(event, rules)
    if ruled is None:
        return None
    return Decision(ruled[0], reasons=(ruled[1],), features=known)
