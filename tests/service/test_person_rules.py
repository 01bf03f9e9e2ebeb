"""A person's rules before the model (working hours, out of office, the past), their settings
through the API, and an unknown time zone noted: through a real uvicorn server and through a
calendar pass against Radicale."""

from __future__ import annotations

import datetime as dt

import icalendar
import pytest
from test_service import add_user, invitation, world  # noqa: F401  (a module fixture)

from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.rules import PersonRules, clock_at, decide_by_rules, rule_decision
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")
ICS = "text/calendar"


def event_at(start: dt.datetime, minutes: int = 30) -> icalendar.Event:
    event = icalendar.Event()
    event.add("UID", "rule@example.org")
    event.add("DTSTART", start)
    event.add("DTEND", start + dt.timedelta(minutes=minutes))
    return event


LONDON = dt.UTC  # 2026-11: London is on UTC


@pytest.mark.parametrize(
    ("start", "minutes", "inside"),
    [
        (dt.datetime(2026, 11, 4, 9, 0, tzinfo=LONDON), 60, True),  # Wednesday 09:00-10:00
        (dt.datetime(2026, 11, 4, 8, 59, tzinfo=LONDON), 30, False),  # starts before
        (dt.datetime(2026, 11, 4, 16, 30, tzinfo=LONDON), 30, True),  # ends at 17:00 exactly
        (dt.datetime(2026, 11, 4, 16, 45, tzinfo=LONDON), 30, False),  # ends after
        (dt.datetime(2026, 11, 7, 10, 0, tzinfo=LONDON), 30, False),  # a Saturday
        (dt.datetime(2026, 11, 4, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5))), 30, False),
    ],
)
def test_working_hours_are_read_in_the_persons_time_zone(start, minutes, inside):
    rules = PersonRules(time_zone="Europe/London", working_hours=("09:00", "17:00"))
    ruled = rule_decision(event_at(start, minutes), rules)
    assert (ruled is None) == inside
    if not inside:
        assert ruled[0] == "ask" and "outside your working hours" in ruled[1].words


def test_out_of_office_days_include_the_first_and_last():
    rules = PersonRules(out_of_office=(("2026-11-04", "2026-11-06"),), while_away="ask")
    for day, away in ((3, False), (4, True), (6, True), (7, False)):
        ruled = rule_decision(event_at(dt.datetime(2026, 11, day, 23, 30, tzinfo=dt.UTC)), rules)
        assert (ruled is not None) == away
        if away:
            assert ruled == ("ask", ruled[1]) and "out of office" in ruled[1].words


def test_the_past_is_expired_whatever_the_rules():
    event = event_at(dt.datetime(2026, 11, 4, 9, tzinfo=dt.UTC), 60)
    with clock_at("2026-11-04T09:59:59+00:00"):
        assert decide_by_rules(event, PersonRules()) is None  # not over yet
    with clock_at("2026-11-04T10:00:00+00:00"):
        assert decide_by_rules(event, PersonRules()).decision == "expired"


@pytest.mark.parametrize(
    "bad",
    [
        {"time_zone": "Mars/Olympus"},
        {"time_zone": "x" * 5000},
        {"working_hours": ["9am", "5pm"]},
        {"working_days": [7]},
        {"out_of_office": [["2026-12-02", "2026-12-01"]]},
        {"comment": "two\nlines"},
        {"on_ask": "maybe"},
        {"colour": "blue"},
    ],
)
def test_bad_settings_are_refused_by_name(bad):
    with pytest.raises(MeetingError, match=next(iter(bad)) if "colour" not in bad else "unknown"):
        PersonRules.from_dict(bad)


@pytest.fixture
def served(world, tmp_path, capsys, monkeypatch):  # noqa: F811
    def start(now: str):
        monkeypatch.setenv("CNB_NOW", now)
        store = tmp_path / f"store-{now[:10]}.db"
        token = add_user(store, "user03", capsys)
        extra = ("--directory", str(world / "directory.json"), "--model", str(world / "model.cnb"))
        return Server(store, *extra), token

    return start


def test_settings_through_the_api_decide_before_the_model(served):
    server, ann = served("2026-11-01T00:00:00+00:00")
    with server:
        status, settings, _ = call(server, "GET", "/api/settings", ann)
        assert status == 200 and settings["working_hours"] is None
        change = {
            "time_zone": "America/New_York",
            "working_hours": ["09:00", "10:00"],
            "outside_hours": "decline",
            "comment": "Sent by my assistant.",
        }
        status, settings, _ = call(server, "PUT", "/api/settings", ann, change)
        assert status == 200 and settings["working_days"] == [0, 1, 2, 3, 4]
        assert call(server, "GET", "/api/settings", ann)[1] == settings
        status, body, _ = call(server, "PUT", "/api/settings", ann, {"time_zone": "Nowhere/X"})
        assert status == 400 and "time_zone" in body["error"]
        assert call(server, "PUT", "/api/settings", ann, b"[1, 2]", "application/json")[0] == 400
        # 10:00-10:30 New York: ends after the working hours (09:00-10:00): declined by rule
        status, record, _ = call(
            server, "POST", "/api/requests", ann, invitation("late", "user03@org.example"), ICS
        )
        assert status == 201 and record["decision"] == "decline" and record["p_accept"] is None
        assert "outside your working hours" in record["reasons"][0]["words"]
        status, reply, _ = call(server, "GET", f"/api/requests/{record['id']}/reply.ics", ann)
        assert status == 200 and b"COMMENT:Sent by my assistant." in reply
        away = {"out_of_office": [["2026-11-04", "2026-11-04"]], "working_hours": None}
        assert call(server, "PUT", "/api/settings", ann, away)[0] == 200
        status, record, _ = call(
            server, "POST", "/api/requests", ann, invitation("away", "user03@org.example"), ICS
        )
        assert record["decision"] == "decline" and "out of office" in record["reasons"][0]["words"]


def test_a_meeting_that_has_ended_is_stored_expired_and_never_answered(served):
    server, ann = served("2026-11-05T00:00:00+00:00")  # the invitation was for 4 November
    with server:
        status, record, _ = call(
            server, "POST", "/api/requests", ann, invitation("old", "user03@org.example"), ICS
        )
        assert status == 201 and record["decision"] == "expired"
        status, body, _ = call(server, "GET", f"/api/requests/{record['id']}/reply.ics", ann)
        assert status == 409 and "never answered" in body["error"]


def test_an_unknown_time_zone_is_noted_in_the_answer_and_kept(served):
    server, ann = served("2026-11-01T00:00:00+00:00")
    text = invitation("mars", "user03@org.example").replace(b"America/New_York", b"Mars/Olympus")
    with server:
        status, record, _ = call(server, "POST", "/api/requests", ann, text, ICS)
        assert status == 201, record
        assert any("Mars/Olympus" in note for note in record["warnings"])
        status, again, _ = call(server, "GET", f"/api/requests/{record['id']}", ann)
        assert any("Mars/Olympus" in note for note in again["warnings"])
