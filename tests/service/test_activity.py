"""The record of what the assistant did on each person's behalf (issue 51): every decision
(by the model or a rule), question, answer, PARTSTAT written and reply sent is one entry,
written in the act's own transaction; a person sees their own, as JSON or CSV, through a real
uvicorn server; old entries are forgotten; a store of schema 4 gains the record."""

from __future__ import annotations

import csv
import io
import sqlite3

import httpx
import pytest
from test_service import add_user, invitation, world  # noqa: F401  (a module fixture)

from clusterednb.examples import service as toy
from clusterednb.service.activity_tables import ACTIVITY_FIELDS
from clusterednb.service.store import SCHEMA_VERSION, ServiceStore
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")
ICS = "text/calendar"


def test_every_act_of_a_pass_is_recorded_in_its_own_transaction():
    store, _ = toy.service_store()
    record, _ = store.add_request("ann", toy.request_record() | {"partstat": "ACCEPTED"})
    store.mark_written("ann", record["id"], "ACCEPTED", toy.outgoing_reply())
    (owed,) = store.outbox("ann", "owed")
    store.reply_refused(owed["id"], "421 try later", permanent=False)  # not an act: retried
    store.reply_sent(owed["id"])
    actions = [entry["action"] for entry in store.activity("ann")]
    assert actions == [
        "reply sent to the organiser (ACCEPTED)",
        "ACCEPTED written on the calendar",
        "decided",
    ]
    newest = store.activity("ann")[0]
    assert (newest["uid"], newest["summary"], newest["decision"]) == (
        record["uid"],
        record["summary"],
        "accept",
    )
    assert newest["p_accept"] == record["p_accept"] and newest["decided_by"] == "model"
    second, _ = store.add_request("ann", toy.request_record("m2") | {"partstat": "DECLINED"})
    store.mark_written("ann", second["id"], "DECLINED", toy.outgoing_reply("DECLINED"))
    refused = next(iter(store.outbox("ann", "owed")))
    store.reply_refused(refused["id"], "550 no such user", permanent=True)
    assert store.activity("ann")[0]["action"].startswith("reply refused for good: 550")
    assert store.activity("bob") == []


def test_old_entries_are_forgotten_as_new_ones_arrive():
    store, _ = toy.service_store()
    store.add_request("ann", toy.request_record("old"))
    with store._transaction() as connection:
        connection.execute("UPDATE activity SET at = '2020-01-01T00:00:00+00:00'")
    store.keep_activity_days = 30
    store.add_request("ann", toy.request_record("new"))
    assert [entry["uid"] for entry in store.activity("ann")] == ["new"]


def test_a_store_of_schema_4_gains_the_record(tmp_path):
    path = tmp_path / "old.db"
    with ServiceStore(path) as store:
        store.add_user("ann", "ann@example.org")
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE activity")
        connection.execute("DROP TABLE tokens")
        connection.execute("ALTER TABLE users DROP COLUMN admin")
        connection.execute("ALTER TABLE sessions DROP COLUMN admin")
        connection.execute("ALTER TABLE sessions DROP COLUMN via")
        connection.execute("PRAGMA user_version=4")
    with ServiceStore(path) as store:
        store.add_request("ann", toy.request_record())
        assert [entry["action"] for entry in store.activity("ann")] == ["decided"]
        assert not store.users()[0].admin
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6


def _future(uid: str, attendee: str, hour: str) -> bytes:
    """An invitation on 3 March 2027 at ``hour`` New York time."""
    return (
        invitation(uid, attendee)
        .replace(b"20261104T100000", f"20270303T{hour}".encode())
        .replace(b"20261104T103000", f"20270303T{hour[:2]}3000".encode())
    )


def test_a_person_sees_their_own_record_as_json_and_csv(world, tmp_path, capsys):  # noqa: F811
    store = tmp_path / "store.db"
    ann = add_user(store, "user03", capsys)
    bob = add_user(store, "user05", capsys)
    extra = ("--directory", str(world / "directory.json"), "--model", str(world / "model.cnb"))
    with Server(store, *extra) as server:
        rules = {
            "time_zone": "America/New_York",
            "working_hours": ["09:00", "17:00"],
            "outside_hours": "decline",
        }
        assert call(server, "PUT", "/api/settings", ann, rules)[0] == 200
        late = _future("late", "user03@org.example", "220000")
        status, ruled, _ = call(server, "POST", "/api/requests", ann, late, ICS)
        assert status == 201 and ruled["decision"] == "decline"
        usual = _future("usual", "user03@org.example", "100000")
        status, modelled, _ = call(server, "POST", "/api/requests", ann, usual, ICS)
        assert status == 201
        answer = {"accepted": modelled["decision"] != "accept"}
        assert (
            call(server, "POST", f"/api/requests/{modelled['id']}/feedback", ann, answer)[0] == 200
        )

        status, entries, _ = call(server, "GET", "/api/activity", ann)
        assert status == 200 and [e["uid"] for e in entries] == ["usual", "usual", "late"]
        answered, decided, by_rule = entries
        assert answered["action"] == "answered" and answered["decided_by"] == "you"
        assert answered["decision"] == ("accept" if answer["accepted"] else "decline")
        assert decided["decided_by"] == "model" and decided["p_accept"] == modelled["p_accept"]
        assert decided["reason"] and decided["organizer"] == "boss@org.example"
        assert by_rule["decided_by"] == "rule" and "outside your working hours" in by_rule["reason"]
        assert all(set(e) == set(ACTIVITY_FIELDS) for e in entries)

        status, text, headers = call(server, "GET", "/api/activity?format=csv", ann)
        assert status == 200 and headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(text.decode())))
        assert [row["uid"] for row in rows] == ["usual", "usual", "late"]
        assert list(rows[0]) == list(ACTIVITY_FIELDS)

        assert call(server, "GET", "/api/activity", bob)[1] == []  # nobody else's
        status, body, _ = call(server, "GET", "/api/activity?format=xml", ann)
        assert status == 400 and "format" in body["error"]
        assert call(server, "GET", "/api/activity")[0] == 401

        with httpx.Client(base_url=server.url) as browser:  # the review page shows it too
            assert browser.post("/login", data={"token": ann}).status_code == 303
            page = browser.get("/").text
        assert 'id="activity-table"' in page and "by your rule" in page and "by you" in page
