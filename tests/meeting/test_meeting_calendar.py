"""Feature extraction from iCalendar requests and calendars, and the RFC 5545 reply."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import icalendar
import pytest

from clusterednb.meeting.calendar import extract_features
from clusterednb.meeting.directory import Directory, UserEntry
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.features import FEATURE_NAMES, MEETING_FEATURES
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import make_reply

DIRECTORY = Directory(
    jobs={"boss@lab.org": "administrator", "prof@uni.edu": "faculty"},
    users={
        "ann": UserEntry(
            email="ann@lab.org",
            timezone="America/New_York",
            site="Building 32",
            relations={"boss@lab.org": "supervisor"},
            topics={"budget": "critical", "seminar": "unimportant"},
        )
    },
)


def calendar(*events: str) -> icalendar.Calendar:
    body = "\n".join(f"BEGIN:VEVENT\n{e.strip()}\nEND:VEVENT" for e in events)
    text = f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:test\n{body}\nEND:VCALENDAR\n"
    return read_calendar(text.replace("\n", "\r\n").encode())


def request(start: str, end: str, extra: str = "", method: str = "REQUEST") -> icalendar.Calendar:
    event = f"""
UID:req-1
SEQUENCE:2
DTSTAMP:20261101T120000Z
DTSTART;TZID=America/New_York:{start}
DTEND;TZID=America/New_York:{end}
ORGANIZER:mailto:boss@lab.org
ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:ann@lab.org
SUMMARY:Budget review
{extra}"""
    cal = calendar(event)
    cal.add("METHOD", method)
    return cal


EMPTY = calendar()


def test_a_request_that_overlaps_nothing():
    features = extract_features(
        request("20261104T100000", "20261104T103000", "PRIORITY:4\nLOCATION:Building 32, room 1"),
        EMPTY,
        DIRECTORY,
        "ann",
    )
    assert list(features) == list(FEATURE_NAMES)
    assert features == {
        "start_time": "morning",
        "duration": "30",
        "message_importance": "important",
        "topic_importance": "critical",
        "invitee_job": "administrator",
        "invitee_relation": "supervisor",
        "invitee_recent": "more",
        "invitee_soon": "more",
        "busy_fday": "light-free",
        "busy_hday": "light-free",
        "free_slot_time": "more",
        "conflict": "no",
        "conflict_importance": "other",
        "conflict_frequency": "other",
        "location": "local-none",
    }
    for name, value in features.items():
        assert value in MEETING_FEATURES[name]


def test_a_recurring_conflict_in_another_time_zone_and_an_all_day_event():
    # A weekly 15:00–16:00 Berlin meeting is 09:00–10:00 in New York on 4 Nov 2026 (Berlin
    # is on UTC+1 since 25 Oct, New York on UTC−5 since 1 Nov).
    cal = calendar(
        """
UID:weekly
DTSTART;TZID=Europe/Berlin:20261007T150000
DTEND;TZID=Europe/Berlin:20261007T160000
RRULE:FREQ=WEEKLY
SUMMARY:Staff seminar
LOCATION:Rome
ORGANIZER:mailto:prof@uni.edu
""",
        """
UID:holiday
DTSTART;VALUE=DATE:20261104
SUMMARY:All day
""",
    )
    features = extract_features(
        request("20261104T093000", "20261104T113000"), cal, DIRECTORY, "ann"
    )
    assert features["conflict"] == "yes"
    assert features["conflict_importance"] == "unimportant"  # from the topic keyword
    assert features["conflict_frequency"] == "regularly"
    assert features["duration"] == "longer"
    assert features["free_slot_time"] == "0"
    assert features["start_time"] == "morning"
    assert features["message_importance"] == "other"  # no PRIORITY (the topic is separate)
    assert features["topic_importance"] == "critical"
    assert features["location"] == "local-none"  # the seminar overlaps, it does not precede


def test_busy_day_neighbours_recent_and_soon_meetings_and_location():
    events = [
        f"""
UID:e{i}
DTSTART;TZID=America/New_York:2026110{day}T{hour:02d}0000
DTEND;TZID=America/New_York:2026110{day}T{hour + 1:02d}0000
ORGANIZER:mailto:boss@lab.org
LOCATION:{location}
"""
        for i, (day, hour, location) in enumerate(
            [
                (4, 8, "Building 32"),
                (4, 9, "Downtown"),
                (4, 10, "Downtown"),
                (4, 11, "x"),
                (4, 12, "x"),
                (4, 13, "x"),
                (4, 16, "x"),
                (2, 9, "x"),
                (7, 9, "x"),
            ]
        )
    ]
    features = extract_features(
        request("20261104T143000", "20261104T150000", "LOCATION:Airport"),
        calendar(*events),
        DIRECTORY,
        "ann",
    )
    # 7 of 10 working hours booked; afternoon (13–18) has 2 of 5 hours.
    assert features["busy_fday"] == "booked-free"
    assert features["busy_hday"] == "busy-free"
    assert features["start_time"] == "afternoon"
    assert features["free_slot_time"] == "90"  # 14:00–14:30 plus 15:00–16:00
    assert features["invitee_recent"] == "0"
    assert features["invitee_soon"] == "0"  # the 16:00 meeting with the same requester
    assert features["location"] == "away-away"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"not a calendar", "not valid iCalendar"),
        (b"BEGIN:VCALENDAR\r\nMETHOD:PUBLISH\r\nEND:VCALENDAR\r\n", "METHOD is PUBLISH"),
        (b"BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nEND:VCALENDAR\r\n", "exactly one VEVENT"),
    ],
)
def test_malformed_requests_are_refused_by_name(text, message):
    with pytest.raises(MeetingError, match=message):
        extract_features(read_calendar(text), EMPTY, DIRECTORY, "ann")


def test_unknown_user_and_bad_directory_values(tmp_path):
    good = request("20261104T100000", "20261104T103000")
    with pytest.raises(MeetingError, match="user 'bob' is not in the directory"):
        extract_features(good, EMPTY, DIRECTORY, "bob")
    path = tmp_path / "directory.json"
    DIRECTORY.to_json(path)
    assert Directory.from_json(path) == DIRECTORY
    path.write_text(path.read_text().replace("supervisor", "boss"))
    with pytest.raises(MeetingError, match="relation 'boss'"):
        Directory.from_json(path)


def test_reply_round_trips_through_icalendar():
    stamp = dt.datetime(2026, 11, 2, 9, 0, tzinfo=ZoneInfo("UTC"))
    for accept, status in ((True, "ACCEPTED"), (False, "DECLINED")):
        reply = make_reply(
            request("20261104T100000", "20261104T103000"), "ann@lab.org", accept, stamp
        )
        parsed = icalendar.Calendar.from_ical(reply.to_ical())
        assert str(parsed["METHOD"]) == "REPLY"
        (event,) = list(parsed.walk("VEVENT"))
        assert str(event["UID"]) == "req-1" and int(event["SEQUENCE"]) == 2
        attendee = event["ATTENDEE"]
        assert str(attendee).lower() == "mailto:ann@lab.org"
        assert attendee.params["PARTSTAT"] == status


def test_every_binned_value_is_reachable():
    from clusterednb.meeting import calendar as cal

    assert [cal._start_time(h) for h in (7, 9, 12, 14, 17)] == [
        "early",
        "morning",
        "mid",
        "afternoon",
        "late",
    ]
    assert {cal._start_time(h) for h in range(24)} == set(MEETING_FEATURES["start_time"])
    assert [cal._days_bin(d) for d in (0, 1, 2, 3, 5, 7, 8, None)] == [
        "0",
        "1",
        "3",
        "3",
        "7",
        "7",
        "more",
        "more",
    ]
    free = [
        cal._bin(m, (0, 15, 30, 60, 90, 135), MEETING_FEATURES["free_slot_time"])
        for m in (0, 10, 30, 45, 90, 100, 200)
    ]
    assert free == ["0", "15", "30", "60", "90", "135", "more"]
    assert [cal._bin(m, (15, 30, 60), MEETING_FEATURES["duration"]) for m in (10, 30, 45, 61)] == [
        "15",
        "30",
        "60",
        "longer",
    ]
    loads = {cal._load(share, near) for share in (0.1, 0.5, 0.9) for near in (False, True)}
    assert loads == set(MEETING_FEATURES["busy_fday"])


@pytest.mark.parametrize(
    ("priority", "level"),
    [
        ("1", "critical"),
        ("2", "very important"),
        ("3", "very important"),
        ("4", "important"),
        ("5", "possibly important"),
        ("6", "unimportant"),
        ("9", "unimportant"),
        (None, "other"),
    ],
)
def test_message_importance_from_priority(priority, level):
    extra = f"PRIORITY:{priority}" if priority else ""
    features = extract_features(
        request("20261104T100000", "20261104T103000", extra), EMPTY, DIRECTORY, "ann"
    )
    assert features["message_importance"] == level


@pytest.mark.parametrize(
    ("rule", "frequency"),
    [
        ("RRULE:FREQ=WEEKLY;INTERVAL=2", "occasionally"),
        ("RRULE:FREQ=MONTHLY", "occasionally"),
        ("RRULE:FREQ=DAILY", "regularly"),
        ("", "one time"),
    ],
)
def test_conflict_frequency_and_location_pairs(rule, frequency):
    conflict = f"""
UID:c
DTSTART;TZID=America/New_York:20261104T100000
DTEND;TZID=America/New_York:20261104T110000
PRIORITY:2
LOCATION:Downtown
{rule}
"""
    earlier = """
UID:earlier
DTSTART;TZID=America/New_York:20261104T080000
DTEND;TZID=America/New_York:20261104T083000
LOCATION:Building 32
"""
    features = extract_features(
        request("20261104T101500", "20261104T104500", "LOCATION:Downtown"),
        calendar(conflict, earlier),
        DIRECTORY,
        "ann",
    )
    assert features["conflict_frequency"] == frequency
    assert features["conflict_importance"] == "very important"
    assert features["location"] == "away-local"
    alone = extract_features(
        request("20261104T120000", "20261104T123000"), calendar(conflict), DIRECTORY, "ann"
    )
    assert alone["location"] == "local-away"  # the 10:00 meeting downtown precedes it
    assert alone["busy_fday"] == "light-free" and alone["busy_hday"] == "light-free"
