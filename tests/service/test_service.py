"""The service end to end: a real uvicorn server over a real SQLite file, spoken to in HTTP."""

from __future__ import annotations

import signal
import socket
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from clusterednb.cli import main
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import reply_problems
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")
ICS = "text/calendar"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("service")
    assert main(["meeting", "simulate", "-o", str(folder / "org"), "--pending", "3"]) == 0
    org = folder / "org"
    args = ["meeting", "fit", "--requests", str(org / "requests.csv"), "--store"]
    assert main([*args, str(folder / "none.db"), "--model", str(org / "model.cnb")]) == 0
    return org


def add_user(store, user, capsys, *costs):
    assert (
        main(
            ["users", "add", user, "--email", f"{user}@org.example", "--store", str(store), *costs]
        )
        == 0
    )
    return capsys.readouterr().out.strip()


def invitation(uid: str, attendee: str, sequence: int = 0, extra: str = "") -> bytes:
    text = f"""BEGIN:VCALENDAR
VERSION:2.0
PRODID:test
METHOD:REQUEST
BEGIN:VEVENT
UID:{uid}
SEQUENCE:{sequence}
DTSTAMP:20261101T120000Z
DTSTART;TZID=America/New_York:20261104T100000
DTEND;TZID=America/New_York:20261104T103000
SUMMARY:Budget review
ORGANIZER:mailto:boss@org.example
ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:{attendee}
{extra}END:VEVENT
END:VCALENDAR
"""
    return text.replace("\n\n", "\n").replace("\n", "\r\n").encode()


@pytest.fixture
def served(world, tmp_path, capsys):
    store = tmp_path / "store.db"
    ann = add_user(store, "user03", capsys)
    bob = add_user(store, "user05", capsys, "--cost-false-accept", "1", "--cost-false-decline", "4")
    extra = ("--directory", str(world / "directory.json"), "--model", str(world / "model.cnb"))
    with Server(store, *extra) as server:
        yield server, ann, bob, store


def test_health_auth_decide_replay_and_isolation(served, world):
    server, ann, bob, _ = served
    assert call(server, "GET", "/healthz") == (
        200,
        {"status": "ok"},
        call(server, "GET", "/healthz")[2],
    )
    pending = (world / "pending" / "user03" / "request-0.ics").read_bytes()
    status, body, _ = call(server, "POST", "/api/requests", None, pending, ICS)
    assert status == 401 and "token" in body["error"]
    assert call(server, "POST", "/api/requests", "user03.wrong", pending, ICS)[0] == 401
    status, created, _ = call(server, "POST", "/api/requests", ann, pending, ICS)
    assert status == 201, created
    assert created["decision"] in ("accept", "decline", "ask")
    assert 0 < created["p_accept"] < 1
    assert set(created["expected_loss"]) == {"accept", "decline"}
    assert all({"feature", "value", "log_odds"} <= set(r) for r in created["reasons"])
    assert "conflict" in created["missing"]  # no calendar stored yet: missing, not an error
    status, again, _ = call(server, "POST", "/api/requests", ann, pending, ICS)
    assert status == 200 and again["id"] == created["id"]
    rid = created["id"]
    # Isolation: Bob sees nothing of Ann's, on every route, and not even that it exists.
    for method, path, body in (
        ("GET", f"/api/requests/{rid}", None),
        ("POST", f"/api/requests/{rid}/feedback", {"accepted": True}),
        ("GET", f"/api/requests/{rid}/reply.ics", None),
    ):
        assert call(server, method, path, bob, body)[0] == 404
    assert call(server, "GET", "/api/requests", bob)[1] == []
    status, listing, _ = call(server, "GET", "/api/requests", ann)
    assert [r["id"] for r in listing] == [rid]


def test_bad_bodies_are_4xx_json(served):
    server, ann, _, _ = served
    cases = {
        "not iCalendar": (b"hello", ICS, 400),
        "no VEVENT": (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", ICS, 400),
        "not an attendee": (invitation("x1", "someone@else.example"), ICS, 400),
        "wrong type": (invitation("x2", "user03@org.example"), "application/json", 415),
        "too large": (b"X" * ((1 << 20) + 1), ICS, 413),
        "empty": (b"", ICS, 400),
    }
    for name, (body, kind, expected) in cases.items():
        status, answer, headers = call(server, "POST", "/api/requests", ann, body, kind)
        assert status == expected, (name, answer)
        assert headers["content-type"].startswith("application/json") and answer["error"], name
    status, answer, _ = call(server, "POST", "/api/requests/1/feedback", ann, b"nope", "text/plain")
    assert status in (400, 404)


def test_feedback_reply_calendar_status_and_revocation(served, world, capsys):
    server, ann, _, store = served
    assert (
        call(
            server,
            "PUT",
            "/api/calendar",
            ann,
            (world / "calendars" / "user03.ics").read_bytes(),
            ICS,
        )[0]
        == 200
    )
    pending = (world / "pending" / "user03" / "request-1.ics").read_bytes()
    created = call(server, "POST", "/api/requests", ann, pending, ICS)[1]
    assert created["missing"] == []  # calendar and directory known: every feature computed
    rid = created["id"]
    assert call(server, "POST", f"/api/requests/{rid}/feedback", ann, {"accepted": "yes"})[0] == 400
    status, answered, _ = call(
        server, "POST", f"/api/requests/{rid}/feedback", ann, {"accepted": False}
    )
    assert status == 200 and answered["answer"] == "decline"
    status, data, headers = call(server, "GET", f"/api/requests/{rid}/reply.ics", ann)
    assert status == 200 and headers["content-type"].startswith("text/calendar")
    assert reply_problems(data, read_calendar(pending)) == []
    assert b"PARTSTAT=DECLINED" in data  # the person's answer, not the guess
    status, state, _ = call(server, "GET", "/api/status", ann)
    assert status == 200 and state["users"] == 2 and state["answers"] == 1 and state["model"]
    assert main(["users", "revoke", "user03", "--store", str(store)]) == 0
    capsys.readouterr()
    assert call(server, "GET", "/api/requests", ann)[0] == 401


def test_concurrent_posts_lose_nothing_and_duplicate_nothing(served):
    server, ann, _, store = served

    def post(index: int) -> int:
        body = invitation(f"load-{index}@org.example", "user03@org.example")
        return call(server, "POST", "/api/requests", ann, body, ICS)[0]

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(post, range(400)))
        replays = list(pool.map(post, range(0, 400, 10)))
    assert statuses.count(201) == 400 and set(replays) == {200}
    with sqlite3.connect(store) as connection:
        assert connection.execute("SELECT count(*) FROM requests").fetchone()[0] == 400


def test_a_killed_server_keeps_every_request_it_acknowledged(world, tmp_path, capsys):
    store = tmp_path / "store.db"
    ann = add_user(store, "user03", capsys)
    server = Server(store).start()
    acknowledged = []

    def post(index: int) -> None:
        body = invitation(f"crash-{index}@org.example", "user03@org.example")
        try:
            status, answer, _ = call(server, "POST", "/api/requests", ann, body, ICS, timeout=10)
        except OSError:
            return
        if status == 201:
            acknowledged.append(answer["uid"])

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(post, i) for i in range(400)]
        deadline = time.monotonic() + 60
        while len(acknowledged) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        server.process = None
        for future in futures:
            future.result()
    with Server(store) as again:
        assert call(again, "GET", "/healthz")[0] == 200
    with sqlite3.connect(store) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {row[0] for row in connection.execute("SELECT uid FROM requests")}
    assert set(acknowledged) <= stored and len(acknowledged) >= 40


def test_a_new_store_asks_for_everything(tmp_path, capsys):
    store = tmp_path / "store.db"
    ann = add_user(store, "ann", capsys)
    server = Server(store).start()  # no model, no directory, no feedback
    body = invitation("first@org.example", "ann@org.example")
    status, answer, _ = call(server, "POST", "/api/requests", ann, body, ICS)
    assert status == 201 and answer["decision"] == "ask" and answer["p_accept"] is None
    assert call(server, "GET", f"/api/requests/{answer['id']}/reply.ics", ann)[0] == 409
    status, state, _ = call(server, "GET", "/api/status", ann)
    assert state["model"] is False and state["answers"] == 0
    # A clean stop: uvicorn finishes, then re-raises the signal as its exit status.
    assert server.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    assert "Finished server process" in server.log.read_text()


BROKEN = [
    b"\xff\xfe\x00B\x00E\x00G\x00I\x00N",  # UTF-16 bytes
    invitation("latin", "user03@org.example").replace(b"Budget", "Bud\xe9get".encode("latin-1")),
    invitation("nostart", "user03@org.example").replace(
        b"DTSTART;TZID=America/New_York:20261104T100000\r\n", b""
    ),
    invitation(
        "many",
        "user03@org.example",
        extra="".join(f"ATTENDEE:mailto:p{i}@x.example\n" for i in range(10_000)),
    ),
    invitation("rrule", "user03@org.example", extra="RRULE:FREQ=SECONDLY;INTERVAL=0\n"),
    invitation("line", "user03@org.example", extra="DESCRIPTION:" + "x" * 500_000 + "\n"),
    invitation("seq", "user03@org.example").replace(b"SEQUENCE:0", b"SEQUENCE:-5"),
    b"BEGIN:VCALENDAR\r\n" * 20_000,
    invitation("dur", "user03@org.example").replace(
        b"DTEND;TZID=America/New_York:20261104T103000", b"DURATION:P-1D"
    ),
]


def test_broken_invitations_get_4xx_and_the_server_stays_healthy(served):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    server, ann, _, _ = served
    for body in BROKEN:
        status, answer, _ = call(server, "POST", "/api/requests", ann, body, ICS)
        assert status < 500, (body[:60], answer)

    lines = st.sampled_from(
        [
            b"BEGIN:VCALENDAR",
            b"END:VCALENDAR",
            b"BEGIN:VEVENT",
            b"END:VEVENT",
            b"METHOD:REQUEST",
            b"UID:u",
            b"DTSTART:20261104T100000Z",
            b"DTSTART;TZID=Nowhere:x",
            b"SEQUENCE:x",
            b"ORGANIZER:mailto:boss@org.example",
            b"ATTENDEE:mailto:user03@org.example",
            b"RRULE:FREQ=DAILY;COUNT=-1",
            b"DURATION:PT-5M",
            b"STATUS:CANCELLED",
            b"\x00\x01",
        ]
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(lines, max_size=14), st.binary(max_size=40))
    def fuzz(parts, noise):
        body = b"\r\n".join(parts) + noise
        status, _, _ = call(server, "POST", "/api/requests", ann, body, ICS)
        assert 200 <= status < 500

    fuzz()
    assert call(server, "GET", "/healthz")[0] == 200


def test_a_new_users_first_answers_move_them_into_their_cluster(tmp_path):
    """After 5 answers, the refitted organisation model predicts a new user better than a
    No-Sharing model of those 5 answers (averaged over several new users)."""
    from clusterednb import ClusteredNB, NoSharingNB
    from clusterednb.meeting import FEATURE_NAMES, meeting_schema, simulate_organisation
    from clusterednb.service.learning import refit
    from clusterednb.service.store import ServiceStore

    organisation = simulate_organisation(np.random.default_rng(3))
    requests, truth = organisation.requests, organisation.truth
    sizes = truth["group"].map(truth["group"].value_counts())
    newcomers = truth.loc[sizes >= 2, "user"].tolist()[:6]
    gains = []
    for index, user in enumerate(newcomers):
        history = requests[requests["user"] != user]
        base = tmp_path / f"base-{index}.cnb"
        ClusteredNB(inference="bhc", schema=meeting_schema(), progress=False).fit(
            history[list(FEATURE_NAMES)], history["accepted"], history["user"]
        ).save(base)
        own = requests[requests["user"] == user]
        first, rest = own.iloc[:5], own.iloc[5:]
        with ServiceStore(tmp_path / f"store-{index}.db") as store:
            store.add_user(user, f"{user}@org.example")
            for k, (_, row) in enumerate(first.iterrows()):
                record = {
                    "uid": f"{user}-{k}",
                    "recurrence_id": "",
                    "sequence": 0,
                    "ics": b"",
                    "summary": "",
                    "organizer": "",
                    "starts_at": "2026-11-04T10:00:00+00:00",
                    "features": {n: row[n] for n in FEATURE_NAMES},
                    "missing": [],
                    "decision": "ask",
                    "p_accept": None,
                    "loss_accept": None,
                    "loss_decline": None,
                    "reasons": [],
                }
                stored, _ = store.add_request(user, record)
                store.answer(user, stored["id"], row["accepted"] == "accept")
            model = refit(store, base)
        tasks = np.array([user] * len(rest), dtype=object)
        clustered = (model.predict(rest[list(FEATURE_NAMES)], tasks) == rest["accepted"]).mean()
        alone = NoSharingNB(schema=meeting_schema()).fit(
            first[list(FEATURE_NAMES)], first["accepted"], first["user"]
        )
        no_sharing = (alone.predict(rest[list(FEATURE_NAMES)], tasks) == rest["accepted"]).mean()
        gains.append(clustered - no_sharing)
    assert np.mean(gains) > 0.05, gains


def test_a_store_of_schema_1_is_migrated(tmp_path):
    from clusterednb.service.store import SCHEMA_VERSION, ServiceStore

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as connection:  # the first schema: no "origin" column
        connection.executescript(
            "CREATE TABLE users (user TEXT PRIMARY KEY, email TEXT NOT NULL, token_salt BLOB "
            "NOT NULL, token_hash BLOB NOT NULL, created_at TEXT NOT NULL, revoked INTEGER NOT "
            "NULL DEFAULT 0, cost_false_accept REAL NOT NULL DEFAULT 1.0, cost_false_decline "
            "REAL NOT NULL DEFAULT 1.0);"
            "CREATE TABLE requests (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, "
            "uid TEXT NOT NULL, recurrence_id TEXT NOT NULL DEFAULT '', sequence INTEGER NOT "
            "NULL, received_at TEXT NOT NULL, ics BLOB NOT NULL, summary TEXT NOT NULL, "
            "organizer TEXT NOT NULL, starts_at TEXT NOT NULL, features TEXT NOT NULL, missing "
            "TEXT NOT NULL, decision TEXT NOT NULL, p_accept REAL, loss_accept REAL, "
            "loss_decline REAL, reasons TEXT NOT NULL, answer TEXT, answered_at TEXT, "
            "UNIQUE (user, uid, recurrence_id, sequence));"
            "INSERT INTO requests (user, uid, sequence, received_at, ics, summary, organizer, "
            "starts_at, features, missing, decision, reasons) VALUES ('ann', 'u1', 0, 'now', "
            "x'', 'Budget', 'boss@x', '2026-11-04T10:00:00', '{}', '[]', 'ask', '[]');"
            "PRAGMA user_version = 1;"
        )
    with ServiceStore(path) as store:
        assert [r["uid"] for r in store.requests("ann")] == ["u1"]
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(Exception, match="newer version"):
        ServiceStore(path)


def test_a_port_taken_before_the_server_binds_it_is_replaced(tmp_path):
    """The test servers' port is free when chosen, not always when bound (another process's
    ephemeral port): the helper starts again on a fresh one instead of failing the test."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = Server(tmp_path / "service.db")
        server.port = taken.getsockname()[1]
        server.url = f"http://127.0.0.1:{server.port}"
        with server:
            assert server.port != taken.getsockname()[1]
            assert call(server, "GET", "/healthz")[0] == 200
