"""Faults an unattended assistant meets, injected into real servers on 127.0.0.1: an SMTP
sink that refuses or is down, a proxy in front of Radicale that refuses writes (403, 500),
drops connections and loses responses to writes it applied, an organiser who moves a meeting
between the pass's read and its write, a correction on the page, two passes at once, and
``kill -9`` at random points of a pass. Every scenario ends with exactly one REPLY per
invitation and answer, and the right PARTSTAT on the server, once the fault clears."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from urllib.parse import urlparse

import pytest

from caldav_helpers import NEW_YORK_ZONE, put_raw, server_copy, sync_args, upload, vcalendar, vevent
from calendar_servers import USER
from clusterednb.cli import main
from clusterednb.meeting.invitation import find_attendee
from clusterednb.service.store import ServiceStore
from fault_servers import FaultyProxy, FaultySMTP, replies_per_uid

caldav = pytest.importorskip("caldav", reason="caldav is not installed")
pytest.importorskip("radicale", reason="radicale is not installed")
pytest.importorskip("aiosmtpd", reason="aiosmtpd is not installed")


def invitations(n: int) -> dict[str, str]:
    """``n`` invitations to USER from the boss, spread over the week of 2 November 2026."""
    found = {}
    for i in range(n):
        day, hour = 2 + i % 5, 9 + (i // 5) % 8
        start = f"202611{day:02d}T{hour:02d}{(i // 40) * 15 % 60:02d}00"
        end = f"202611{day:02d}T{hour:02d}{(i // 40) * 15 % 60 + 10:02d}00"
        found[f"m{i}"] = vcalendar(
            vevent(f"m{i}", start, end, summary=f"Meeting {i}"), zones=NEW_YORK_ZONE + "\n"
        )
    return found


@pytest.fixture
def faulty_smtp():
    sink = FaultySMTP()
    yield sink
    sink.stop()


@pytest.fixture
def proxy(radicale):
    parsed = urlparse(radicale)
    found = FaultyProxy((parsed.hostname, parsed.port))
    yield found
    found.stop()


def run(proxy_url, setting, tmp_path, capsys, sink, *extra):
    args = [
        *sync_args(proxy_url, setting, tmp_path),
        "--directory", str(setting / "directory.json"), "--json", "--ask-band", "0",
        "--smtp", sink.address, "--from", USER, *extra,
    ]  # fmt: skip
    status = main(args)
    captured = capsys.readouterr()
    outcomes = json.loads(captured.out) if status == 0 else []
    return status, {o["uid"]: o for o in outcomes}, captured.err


def partstats(calendar, uids) -> dict[str, str]:
    return {
        uid: str(
            find_attendee(next(iter(server_copy(calendar, uid).walk("VEVENT"))), USER).params[
                "PARTSTAT"
            ]
        )
        for uid in uids
    }


def decided(tmp_path, name: str = "state.db") -> dict[str, str]:
    """What the store says each invitation's PARTSTAT should be."""
    with ServiceStore(tmp_path / name) as store:
        return {r["uid"]: r["partstat"] for r in store.requests("ann") if r["partstat"]}


def assert_exactly_once(sink, calendar, tmp_path, uids, name: str = "state.db"):
    """Every invitation answered on the server as decided, and mailed exactly once, with
    the PARTSTAT the server holds."""
    wanted = decided(tmp_path, name)
    assert sorted(wanted) == sorted(uids)
    assert partstats(calendar, uids) == wanted
    per_uid = sink.replies_per_uid()
    assert {uid: per_uid[(uid, "")] for uid in uids} == dict.fromkeys(uids, 1)


@pytest.mark.parametrize("fault", ["down", "451"])
def test_an_smtp_outage_loses_no_reply_and_retries_with_the_same_message_id(
    proxy, faulty_smtp, setting, tmp_path, capsys, fault
):
    _, calendar = upload(proxy.url, invitations(3))
    if fault == "down":
        faulty_smtp.down()
    else:
        faulty_smtp.mode = "451"
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    assert all("waits in the outbox" in o["action"] for o in outcomes.values()), outcomes
    assert f"SMTP server {faulty_smtp.address}" in err
    assert "'Accepted: Meeting" in err or "'Declined: Meeting" in err
    assert partstats(calendar, outcomes) == decided(tmp_path)  # written, replies owed
    with ServiceStore(tmp_path / "state.db") as store:
        owed = {row["message_id"] for row in store.outbox("ann", "owed")}
        assert len(owed) == 3 and store.problems("ann")
    faulty_smtp.up()
    faulty_smtp.mode = "ok"
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    assert_exactly_once(faulty_smtp, calendar, tmp_path, ["m0", "m1", "m2"])
    assert {m["Message-ID"] for m in faulty_smtp.messages} == owed  # the same Message-IDs
    run(proxy.url, setting, tmp_path, capsys, faulty_smtp)  # and nothing again
    assert len(faulty_smtp.messages) == 3


def test_a_permanent_smtp_refusal_is_kept_as_failed_not_retried(
    proxy, faulty_smtp, setting, tmp_path, capsys
):
    upload(proxy.url, invitations(1))
    faulty_smtp.mode = "550"
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0 and "the reply failed" in outcomes["m0"]["action"]
    assert "550 5.7.1 not accepted" in err
    faulty_smtp.mode = "ok"
    run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert faulty_smtp.messages == []
    with ServiceStore(tmp_path / "state.db") as store:
        (row,) = store.outbox("ann")
        assert row["state"] == "failed" and row["attempts"] == 1
        assert "550" in store.problems("ann")[0]


@pytest.mark.parametrize("fault", ["drop", "apply-drop", 500])
def test_a_write_that_fails_or_loses_its_response_is_finished_by_the_next_pass(
    proxy, faulty_smtp, setting, tmp_path, capsys, fault
):
    _, calendar = upload(proxy.url, invitations(3))
    href = urlparse(str(calendar.event_by_uid("m1").url)).path
    faults = iter([fault])
    proxy.seen.clear()  # the uploads were PUTs too
    proxy.fault = lambda method, path: (
        next(faults, None) if (method, path) == ("PUT", href) else None
    )
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    assert outcomes["m1"]["action"].startswith("skipped: "), outcomes["m1"]
    assert "'Meeting 1' (m1)" in err and "next pass" in err
    assert {uid: per for uid, per in faulty_smtp.replies_per_uid().items()} == {
        ("m0", ""): 1,
        ("m2", ""): 1,
    }
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    expected = "finished an interrupted answer" if fault == "apply-drop" else "answered on"
    assert outcomes["m1"]["action"].startswith(expected), outcomes["m1"]
    assert_exactly_once(faulty_smtp, calendar, tmp_path, ["m0", "m1", "m2"])
    puts = [path for method, path in proxy.seen if (method, path) == ("PUT", href)]
    assert len(puts) == (1 if fault == "apply-drop" else 2)  # an applied write is not repeated


def test_one_unwritable_event_is_skipped_with_a_note_and_the_rest_are_answered(
    proxy, faulty_smtp, setting, tmp_path, capsys
):
    _, calendar = upload(proxy.url, invitations(3))
    href = urlparse(str(calendar.event_by_uid("m0").url)).path
    proxy.fault = lambda method, path: 403 if (method, path) == ("PUT", href) else None
    for _ in range(2):
        status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
        assert status == 0, err
        assert outcomes["m0"]["action"].startswith("skipped: the server refused to write")
        assert "403" in outcomes["m0"]["action"] and "Traceback" not in err
    assert partstats(calendar, ["m0"]) == {"m0": "NEEDS-ACTION"}
    per_uid = faulty_smtp.replies_per_uid()
    assert per_uid == {("m1", ""): 1, ("m2", ""): 1}
    with ServiceStore(tmp_path / "state.db") as store:
        assert "403" in store.problems("ann")[0]


def test_a_meeting_moved_between_the_read_and_the_write_is_decided_afresh(
    proxy, faulty_smtp, setting, tmp_path, capsys
):
    _, calendar = upload(proxy.url, invitations(1))
    href = urlparse(str(calendar.event_by_uid("m0").url)).path
    moved = vcalendar(
        vevent("m0", "20261105T150000", "20261105T151000", sequence=1, summary="Meeting 0"),
        zones=NEW_YORK_ZONE + "\n",
    )
    direct = caldav.DAVClient(
        url=proxy.url.replace(proxy.url, f"http://{proxy.upstream[0]}:{proxy.upstream[1]}/"),
        username="ann",
        password="secret",
    )
    once = iter([True])

    def organiser_moves_it(method, path):
        if (method, path) == ("PUT", href) and next(once, False):
            put_raw(direct, calendar, "m0", moved)

    proxy.before = organiser_moves_it
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    assert outcomes["m0"]["action"].startswith("left alone: changed on the server")
    assert faulty_smtp.messages == []
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert outcomes["m0"]["sequence"] == 1 and outcomes["m0"]["action"].startswith("answered")
    (message,) = faulty_smtp.messages
    assert b"SEQUENCE:1" in next(
        p.get_payload(decode=True)
        for p in message.walk()
        if p.get_content_type() == "text/calendar"
    )
    event = next(iter(server_copy(calendar, "m0").walk("VEVENT")))
    assert int(event["SEQUENCE"]) == 1
    assert str(find_attendee(event, USER).params["PARTSTAT"]) == decided(tmp_path)["m0"]


def test_a_correction_on_the_page_reaches_the_calendar_and_the_organiser(
    proxy, faulty_smtp, setting, tmp_path, capsys
):
    _, calendar = upload(proxy.url, invitations(1))
    run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    first = decided(tmp_path)["m0"]
    with ServiceStore(tmp_path / "state.db") as store:
        (record,) = store.requests("ann")
        store.answer("ann", record["id"], accepted=first == "DECLINED")  # the other answer
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    flipped = "ACCEPTED" if first == "DECLINED" else "DECLINED"
    assert outcomes["m0"]["action"] == (
        f"passed on the person's answer ({flipped.lower()}): answered on the server and by mail"
    )
    assert partstats(calendar, ["m0"]) == {"m0": flipped}
    said = [
        str(find_attendee(next(iter(__import__("icalendar").Calendar.from_ical(
            p.get_payload(decode=True)).walk("VEVENT"))), USER).params["PARTSTAT"])
        for m in faulty_smtp.messages for p in m.walk() if p.get_content_type() == "text/calendar"
    ]  # fmt: skip
    assert said == [first, flipped]
    run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert len(faulty_smtp.messages) == 2


def sync_command(url, setting, tmp_path, sink) -> list[str]:
    return [
        sys.executable, "-m", "clusterednb.cli", *sync_args(url, setting, tmp_path),
        "--directory", str(setting / "directory.json"), "--json", "--ask-band", "0",
        "--smtp", sink.address, "--from", USER,
    ]  # fmt: skip


def test_two_passes_at_once_answer_each_invitation_once(radicale, faulty_smtp, setting, tmp_path):
    _, calendar = upload(radicale, invitations(12))
    command = sync_command(radicale, setting, tmp_path, faulty_smtp)
    passes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]  # fmt: skip
    for process in passes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()
    assert_exactly_once(faulty_smtp, calendar, tmp_path, [f"m{i}" for i in range(12)])


def kill_at_random_points(command, rng, kills: int, longest: float) -> None:
    """Start ``command`` ``kills`` times and ``kill -9`` it at a random moment of each run."""
    for _ in range(kills):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5 * longest, 1.1 * longest))
        process.kill()
        process.wait(timeout=30)


@pytest.mark.parametrize(
    "n, kills",
    [(12, 3), pytest.param(120, 25, marks=pytest.mark.slow)],
)
def test_kill_9_in_mid_pass_loses_nothing(radicale, faulty_smtp, setting, tmp_path, n, kills):
    _, calendar = upload(radicale, invitations(n))
    command = sync_command(radicale, setting, tmp_path, faulty_smtp)
    started = time.monotonic()  # a dry run tells how long a pass takes
    finished = subprocess.run([*command, "--dry-run"], capture_output=True, timeout=600)
    assert finished.returncode == 0, finished.stderr.decode()
    one_pass = time.monotonic() - started
    rng = random.Random(int(os.environ.get("CNB_FAULT_SEED", "7")))
    kill_at_random_points(command, rng, kills, one_pass)
    print(f"one pass {one_pass:.1f} s; after {kills} kills: {len(faulty_smtp.messages)} sent")
    finished = subprocess.run(command, capture_output=True, timeout=600)
    assert finished.returncode == 0, finished.stderr.decode()
    assert_none_lost(faulty_smtp, calendar, tmp_path, [f"m{i}" for i in range(n)])


def assert_none_lost(sink, calendar, tmp_path, uids, name: str = "state.db"):
    """After crashes: every invitation answered on the server as decided and mailed, none
    lost, at most one sent twice (SMTP's at-least-once: the server took it, the process died
    before recording so)."""
    wanted = decided(tmp_path, name)
    assert sorted(wanted) == sorted(uids)
    assert partstats(calendar, uids) == wanted
    per_uid = sink.replies_per_uid()
    counts = [per_uid[(uid, "")] for uid in uids]
    lost, duplicated = counts.count(0), sum(c - 1 for c in counts if c > 1)
    assert lost == 0 and duplicated <= 1, (lost, duplicated)


def test_a_scheduling_server_sends_the_one_reply_with_the_comment(
    xandikos_scheduling, smtp, setting, tmp_path, capsys
):
    """Xandikos schedules (RFC 6638): it mails the organiser the REPLY when the attendee's
    PARTSTAT changes. cnb writes the PARTSTAT and the person's comment, mails nothing itself
    (it warns that --smtp is not used for replies), and the organiser gets exactly one REPLY,
    with the comment."""
    inbox, smtp_address = smtp
    upload_to = caldav.DAVClient(url=xandikos_scheduling)
    calendar = upload_to.principal().calendars()[0]
    for text in invitations(2).values():
        calendar.add_event(text.replace("\n", "\r\n"))
    args = [
        *sync_args(xandikos_scheduling, setting, tmp_path),
        "--directory", str(setting / "directory.json"), "--json", "--ask-band", "0",
        "--smtp", smtp_address, "--comment", "My assistant answered for me.",
    ]  # fmt: skip
    for _ in range(2):
        assert main(args) == 0
        captured = capsys.readouterr()
        assert "calendar-auto-schedule" in captured.err
    deadline = time.monotonic() + 10
    while len(inbox.messages) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    assert replies_per_uid(inbox.messages) == {("m0", ""): 1, ("m1", ""): 1}
    for message in inbox.messages:
        (part,) = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
        data = part.get_payload(decode=True)
        assert b"METHOD:REPLY" in data and b"My assistant answered for me." in data
    assert partstats(calendar, ["m0", "m1"]) == decided(tmp_path)


def test_a_server_that_dies_in_mid_pass_is_finished_by_the_next_pass(
    proxy, faulty_smtp, setting, tmp_path, capsys
):
    """Radicale unreachable from the second write of a pass on (every request dropped, as
    when the server is killed): the pass ends in one line per skipped invitation, and the
    pass after the server is back answers the rest, each once."""
    _, calendar = upload(proxy.url, invitations(4))
    proxy.seen.clear()
    dead = {"now": False}

    def dies_after_one_write(method, path):
        if dead["now"]:
            return "drop"
        if method == "PUT":
            dead["now"] = True  # this write goes through; the server dies after it
        return None

    proxy.fault = dies_after_one_write
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    skipped = [uid for uid, o in outcomes.items() if o["action"].startswith("skipped")]
    assert len(skipped) == 3 and "Traceback" not in err
    proxy.fault = lambda method, path: None  # the server is back
    status, outcomes, err = run(proxy.url, setting, tmp_path, capsys, faulty_smtp)
    assert status == 0, err
    assert_exactly_once(faulty_smtp, calendar, tmp_path, [f"m{i}" for i in range(4)])
