"""The meeting assistant obeys RFC 5545/5546: what it answers, what it refuses, what it writes."""

from __future__ import annotations

import datetime as dt
import warnings

import icalendar
import numpy as np
import pytest
from test_meeting_calendar import DIRECTORY

from caldav_helpers import NEW_YORK_ZONE
from clusterednb.meeting.calendar import extract_features
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.meeting.explain import reasons
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import make_reply, reply_problems
from clusterednb.meeting.simulation.calendars import make_calendar, make_directory, make_request

STAMP = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)


def ics(*components: str, method: str = "METHOD:REQUEST") -> bytes:
    body = "\n".join(c.strip() for c in components)
    text = f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:test\n{method}\n{body}\nEND:VCALENDAR\n"
    return text.replace("\n\n", "\n").replace("\n", "\r\n").encode()


def vevent(*lines: str, uid: str = "req-1", organizer: bool = True, attendee: bool = True) -> str:
    base = [
        f"UID:{uid}",
        "SEQUENCE:3",
        "DTSTAMP:20261101T120000Z",
        "DTSTART;TZID=America/New_York:20261104T100000",
        "DTEND;TZID=America/New_York:20261104T103000",
        "SUMMARY:Budget review",
    ]
    if organizer:
        base.append("ORGANIZER:mailto:boss@lab.org")
    if attendee:
        base.append("ATTENDEE;PARTSTAT=NEEDS-ACTION;CN=Ann;RSVP=TRUE:mailto:ann@lab.org")
    return "BEGIN:VEVENT\n" + "\n".join([*base, *lines]) + "\nEND:VEVENT"


EMPTY = read_calendar(ics(method=""))


def features_of(request: bytes, calendar: icalendar.Calendar = EMPTY) -> dict[str, str]:
    return extract_features(read_calendar(request), calendar, DIRECTORY, "ann")


def test_a_reply_to_one_occurrence_carries_its_recurrence_id():
    request = read_calendar(
        ics(vevent("RECURRENCE-ID;TZID=America/New_York:20261104T090000"), NEW_YORK_ZONE)
    )
    reply = make_reply(request, "ann@lab.org", True, STAMP)
    (event,) = reply.walk("VEVENT")
    assert event.decoded("RECURRENCE-ID") == dt.datetime(
        2026, 11, 4, 9, 0, tzinfo=event.decoded("RECURRENCE-ID").tzinfo
    )
    assert str(event["RECURRENCE-ID"].params["TZID"]) == "America/New_York"
    assert reply_problems(reply.to_ical(), request) == []


@pytest.mark.parametrize("with_zone", [True, False])
def test_a_reply_defines_every_time_zone_it_uses(with_zone):
    source = ics(vevent(), NEW_YORK_ZONE) if with_zone else ics(vevent())
    request = read_calendar(source)
    data = make_reply(request, "ann@lab.org", False, STAMP).to_ical()
    reply = icalendar.Calendar.from_ical(data)
    assert reply.get_missing_tzids() == set()
    assert {str(z["TZID"]) for z in reply.walk("VTIMEZONE")} == {"America/New_York"}
    (event,) = reply.walk("VEVENT")
    assert str(event["DTSTAMP"].to_ical().decode()).endswith("Z")
    (attendee,) = [event["ATTENDEE"]]
    assert attendee.params["PARTSTAT"] == "DECLINED" and attendee.params["CN"] == "Ann"
    assert "RSVP" not in attendee.params
    assert int(event["SEQUENCE"]) == 3
    assert reply_problems(data, request) == []


def test_the_reply_checker_catches_each_broken_rule():
    request = read_calendar(ics(vevent("RECURRENCE-ID;TZID=America/New_York:20261104T090000")))
    good = make_reply(request, "ann@lab.org", True, STAMP)
    assert reply_problems(good, request) == []
    text = good.to_ical().decode()
    broken = {
        "METHOD is REQUEST": text.replace("METHOD:REPLY", "METHOD:REQUEST"),
        "no VTIMEZONE": text[: text.index("BEGIN:VTIMEZONE")]
        + text[text.index("END:VTIMEZONE") + len("END:VTIMEZONE\r\n") :],
        "no RECURRENCE-ID": "\r\n".join(
            line for line in text.split("\r\n") if not line.startswith("RECURRENCE-ID")
        ),
        "2 ATTENDEEs": text.replace(
            "END:VEVENT", "ATTENDEE;PARTSTAT=ACCEPTED:mailto:eve@lab.org\r\nEND:VEVENT"
        ),
        "not in UTC": text.replace("DTSTAMP:20261102T090000Z", "DTSTAMP:20261102T090000"),
        "SEQUENCE differs": text.replace("SEQUENCE:3", "SEQUENCE:2"),
    }
    for problem, data in broken.items():
        found = reply_problems(data.encode(), request)
        assert any(problem in p for p in found), (problem, found)


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (vevent(organizer=False), "has no ORGANIZER"),
        (vevent(attendee=False), "ann@lab.org is not among the attendees"),
        (
            vevent().replace("ORGANIZER:mailto:boss@lab.org", "ORGANIZER:mailto:ann@lab.org"),
            "ann@lab.org is the organiser",
        ),
        (vevent("STATUS:CANCELLED"), "cancelled"),
        (vevent().replace("SEQUENCE:3", "SEQUENCE:abc"), "SEQUENCE"),
        (
            vevent().replace("DTEND;TZID=America/New_York:20261104T103000", "DURATION:PXYZ"),
            "DURATION",
        ),
    ],
)
def test_requests_that_must_not_be_answered_are_refused_by_reason(event, message):
    request = read_calendar(ics(event))
    with pytest.raises(MeetingError, match=message):
        features_of(ics(event))
    with pytest.raises(MeetingError, match=message):
        make_reply(request, "ann@lab.org", True, STAMP)


def test_an_event_without_method_is_an_invitation_but_another_method_is_refused():
    assert features_of(ics(vevent(), method=""))["conflict"] == "no"
    with pytest.raises(MeetingError, match="METHOD is CANCEL"):
        features_of(ics(vevent(), method="METHOD:CANCEL"))


def test_an_unknown_time_zone_is_read_in_the_users_zone_with_a_warning():
    event = vevent().replace("America/New_York", "Mars/Olympus")
    with pytest.warns(MeetingWarning, match="Mars/Olympus"):
        features = features_of(ics(event))
    assert features["start_time"] == "morning"  # 10:00 read in New York
    reply = make_reply(read_calendar(ics(event)), "ann@lab.org", True, STAMP, "America/New_York")
    assert reply_problems(reply) == []
    assert "Mars/Olympus" not in reply.to_ical().decode()


def test_one_bad_calendar_event_is_skipped_with_a_warning_naming_it():
    good = """BEGIN:VEVENT
UID:good
DTSTAMP:20261101T120000Z
DTSTART;TZID=America/New_York:20261104T100000
DTEND;TZID=America/New_York:20261104T110000
END:VEVENT"""
    bad = {
        "no-start": "BEGIN:VEVENT\nUID:no-start\nDTSTAMP:20261101T120000Z\nEND:VEVENT",
        "odd-rule": good.replace("UID:good", "UID:odd-rule").replace(
            "END:VEVENT", "RRULE:FREQ=SOMETIMES\nEND:VEVENT"
        ),
        "odd-rdate": good.replace("UID:good", "UID:odd-rdate").replace(
            "END:VEVENT", "RDATE:garbage\nEND:VEVENT"
        ),
        "odd-start": good.replace("UID:good", "UID:odd-start").replace(
            "DTSTART;TZID=America/New_York:20261104T100000", "DTSTART:garbage"
        ),
        "bad-duration": good.replace("UID:good", "UID:bad-duration").replace(
            "DTEND;TZID=America/New_York:20261104T110000", "DURATION:PXYZ"
        ),
    }
    for uid, text in bad.items():
        calendar = read_calendar(ics(good, text, method=""))
        with pytest.warns(MeetingWarning, match=f"calendar event {uid} skipped"):
            features = features_of(ics(vevent()), calendar)
        assert features["conflict"] == "yes", uid  # the good event still counts


def test_the_simulated_world_is_conformant_and_every_reply_obeys_rfc_5546():
    rng = np.random.default_rng(5)
    users, roles = ["u0", "u1", "u2"], ["military", "academic", "research lab"]
    directory = make_directory(rng, users, roles)
    for user in users:
        calendar = make_calendar(rng, user, directory)
        assert calendar.get_missing_tzids() == set()
        for index in range(4):
            request = make_request(rng, user, directory, index)
            assert request.get_missing_tzids() == set()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                extract_features(request, calendar, directory, user)
            for accept in (True, False):
                reply = make_reply(request, directory.user(user).email, accept, STAMP)
                assert reply_problems(reply.to_ical(), request) == []


def test_dependent_features_make_one_reason():
    import pandas as pd

    log_odds = pd.Series(
        {"conflict": -2.0, "conflict_importance": -1.5, "conflict_frequency": -0.5, "duration": 1.0}
    )
    features = {
        "conflict": "yes",
        "conflict_importance": "critical",
        "conflict_frequency": "regularly",
        "duration": "30",
    }
    found = reasons(log_odds, features)
    assert [(r.feature, r.value) for r in found] == [
        ("conflict", "yes / critical / regularly"),
        ("duration", "30"),
    ]
    assert found[0].log_odds == pytest.approx(-4.0)
