"""``cnb serve`` under faults: a pass that fails in any way is one log line and the other
passes and people go on, ``/healthz`` says ``degraded`` with the failing people and reasons
while anything fails, ``/metrics`` counts passes and the outbox, and ``kill -9`` of the
service in mid-pass loses no answer (Radicale, an SMTP sink with fault modes)."""

from __future__ import annotations

import logging
import os
import random
import time

import pytest
from test_faults import assert_none_lost, invitations, partstats

from caldav_helpers import upload
from calendar_servers import USER
from clusterednb.cli import main
from clusterednb.service.health import health
from clusterednb.service.passes.schedule import CalendarPasses
from clusterednb.service.store import ServiceStore
from fault_servers import FaultySMTP
from service_helpers import Server, call

pytest.importorskip("fastapi", reason="the service extra is not installed")


def test_a_pass_that_fails_in_any_way_is_one_line_and_the_schedule_goes_on(tmp_path, caplog):
    store = ServiceStore(tmp_path / "service.db")
    store.add_user("ann", USER)
    passes = CalendarPasses(store, lambda: None, 60.0)

    def dropped(settings):
        raise ConnectionResetError(104, "Connection reset by peer")

    with caplog.at_level(logging.WARNING, logger="clusterednb.service.calendar"):
        passes._one_pass("calendar", "ann", "http://dav.example.org/", dropped, None)
    (line,) = [r.getMessage() for r in caplog.records]
    assert line == (
        "calendar pass for ann (http://dav.example.org/) failed: ConnectionResetError: "
        "[Errno 104] Connection reset by peer"
    )
    assert passes.last["ann"].startswith("failed: ")
    report = health(store)
    assert report["status"] == "degraded"
    assert report["failing"][0]["server"] == "http://dav.example.org/"
    store.close()


@pytest.fixture
def sink():
    found = FaultySMTP()
    yield found
    found.stop()


def register(tmp_path, store, user, email, url, capsys, *extra) -> None:
    assert main(["users", "add", user, "--email", email, "--store", str(store)]) == 0
    password = tmp_path / "password"
    password.write_text("secret\n")
    password.chmod(0o600)
    command = ["users", "calendar", user, "--store", str(store), "--caldav", url,
               "--username", "ann", "--password-file", str(password), *extra]  # fmt: skip
    assert main(command) == 0
    capsys.readouterr()


def wait_for(predicate, seconds: float = 90.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError("timed out")


def serve_args(setting, sink, every="0.02"):
    return (
        "--model", str(setting / "model.cnb"), "--directory", str(setting / "directory.json"),
        "--ask-band", "0", "--sync-every", every, "--smtp", sink.address,
        "--from", "assistant@org.example",
    )  # fmt: skip


def test_health_and_metrics_follow_the_failing_passes(radicale, sink, setting, tmp_path, capsys):
    _, calendar = upload(radicale, invitations(2))
    store = tmp_path / "service.db"
    register(tmp_path, store, "ann", USER, radicale, capsys)
    register(tmp_path, store, "zed", "zed@org.example", "http://127.0.0.1:9/", capsys, "--no-check")
    sink.down()
    with Server(store, *serve_args(setting, sink)) as server:

        def degraded_for_both():
            report = call(server, "GET", "/healthz")[1]
            failing = {row["user"]: row for row in report.get("failing") or []}
            return failing if {"ann", "zed"} <= set(failing) else None

        failing = wait_for(degraded_for_both)
        assert "the connection was refused" in failing["zed"]["error"]
        assert f"SMTP server {sink.address}" in failing["ann"]["error"]
        assert partstats(calendar, ["m0", "m1"]) == decided_in(store)  # answered all the same
        metrics = call(server, "GET", "/metrics")[1].decode()
        assert 'cnb_outbox{state="owed"} 2.0' in metrics
        assert 'cnb_passes_failing{kind="calendar"} 2.0' in metrics
        sink.up()
        wait_for(lambda: len(sink.messages) == 2)
        wait_for(lambda: set(degraded_for_both_or_none(server)) == {"zed"})
        time.sleep(2)  # more rounds send nothing again
        metrics = call(server, "GET", "/metrics")[1].decode()
        assert "cnb_replies_sent_total 2.0" in metrics
        log = server.log.read_text()
        assert "calendar pass for zed (http://127.0.0.1:9/) failed" in log
        assert "Traceback" not in log and "secret" not in log
    per_uid = sink.replies_per_uid()
    assert [per_uid[(uid, "")] for uid in ("m0", "m1")] == [1, 1]


def degraded_for_both_or_none(server) -> list[str]:
    report = call(server, "GET", "/healthz")[1]
    return [row["user"] for row in report.get("failing") or []]


def decided_in(store) -> dict[str, str]:
    with ServiceStore(store) as opened:
        return {r["uid"]: r["partstat"] for r in opened.requests("ann")}


@pytest.mark.slow
def test_kill_9_of_the_service_in_mid_pass_loses_nothing(radicale, sink, setting, tmp_path, capsys):
    n = 120
    _, calendar = upload(radicale, invitations(n))
    store = tmp_path / "service.db"
    register(tmp_path, store, "ann", USER, radicale, capsys)
    rng = random.Random(int(os.environ.get("CNB_FAULT_SEED", "11")))
    for _ in range(12):
        server = Server(store, *serve_args(setting, sink)).start()
        time.sleep(rng.uniform(0.2, 6.0))
        server.process.kill()
        server.process.wait()
    with Server(store, *serve_args(setting, sink)):
        wait_for(lambda: len(sink.messages) >= n, 300)
    uids = [f"m{i}" for i in range(n)]
    assert_none_lost(sink, calendar, tmp_path, uids, "service.db")


def test_the_service_and_a_manual_pass_at_once_answer_each_invitation_once(
    radicale, sink, setting, tmp_path, capsys
):
    """``cnb serve`` passing every few seconds while the person runs ``cnb meeting sync`` by
    hand on the same store: the manual pass finds the service's account by the address, takes
    the same lock, and each invitation is answered and mailed once."""
    import subprocess
    import sys
    from urllib.parse import urlparse

    from caldav_helpers import sync_args
    from fault_servers import FaultyProxy

    n = 16
    upload(radicale, invitations(n))
    parsed = urlparse(radicale)
    slow = FaultyProxy((parsed.hostname, parsed.port))  # every request 0.1 s: passes overlap
    slow.before = lambda method, path: time.sleep(0.1)
    store = tmp_path / "service.db"
    register(tmp_path, store, "ann", USER, slow.url, capsys)
    manual = [
        sys.executable,
        "-m",
        "clusterednb.cli",
        *sync_args(slow.url, setting, tmp_path),
        "--state",
        str(store),
        "--ask-band",
        "0",
        "--smtp",
        sink.address,
    ]  # fmt: skip  (no directory: by address)
    with Server(store, *serve_args(setting, sink, every="0.01")):
        passes = [subprocess.Popen(manual, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                  for _ in range(2)]  # fmt: skip
        for process in passes:
            _, err = process.communicate(timeout=300)
            assert process.returncode == 0, err.decode()
        wait_for(lambda: len(sink.messages) >= n)
        time.sleep(2)
    slow.stop()
    per_uid = sink.replies_per_uid()
    assert [per_uid[(f"m{i}", "")] for i in range(n)] == [1] * n
    with ServiceStore(store) as opened:
        assert {r["user"] for r in opened.answered()} <= {"ann"}
        assert len(opened.requests("ann")) == n and opened.requests(USER) == []
