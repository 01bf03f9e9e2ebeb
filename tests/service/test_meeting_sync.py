"""``cnb meeting sync`` against a real CalDAV server (Radicale) and a real SMTP server
(aiosmtpd), both started on 127.0.0.1 by these fixtures."""

from __future__ import annotations

import subprocess

import icalendar
import pytest

from caldav_helpers import (
    INVITATIONS,
    NEW_YORK_ZONE,
    put_raw,
    run_sync,
    server_copy,
    sync_args,
    upload,
    vcalendar,
    vevent,
)
from calendar_servers import USER
from clusterednb.cli import main
from clusterednb.meeting.invitation import find_attendee, read_calendar
from clusterednb.meeting.reply import reply_problems
from service_helpers import free_port

caldav = pytest.importorskip("caldav", reason="caldav is not installed")
pytest.importorskip("radicale", reason="radicale is not installed")
pytest.importorskip("aiosmtpd", reason="aiosmtpd is not installed")


def test_one_pass_answers_by_rfc_5546_on_the_server_and_by_mail(
    radicale, smtp, setting, tmp_path, capsys
):
    inbox, smtp_address = smtp
    client, calendar = upload(radicale, INVITATIONS)
    before = {uid: server_copy(calendar, uid) for uid in INVITATIONS}
    status, outcomes, err = run_sync(
        radicale,
        setting,
        tmp_path,
        capsys,
        "--ask-band",
        "0",
        "--smtp",
        smtp_address,
        "--from",
        USER,
    )
    assert status == 0, err
    by_key = {(o["uid"], o["recurrence_id"]): o for o in outcomes}
    answered = {k for k, o in by_key.items() if o["action"] == "answered on the server and by mail"}
    assert answered == {
        ("ny", None),
        ("berlin", None),
        ("weekly", None),
        ("updated", None),
        ("weekly", "20261109T090000"),
    }
    assert by_key[("cancelled", None)]["action"] == "cancelled: never answered"
    assert ("notme", None) not in by_key and ("busy", None) not in by_key
    assert "allday" in err  # an all-day invitation is left alone, with a warning naming it
    # The server's copy: only the user's PARTSTAT changed.
    for uid in ("ny", "berlin", "weekly", "updated"):
        after = server_copy(calendar, uid)
        for old, new in zip(before[uid].walk("VEVENT"), after.walk("VEVENT"), strict=True):
            partstat = find_attendee(new, USER).params["PARTSTAT"]
            assert partstat in ("ACCEPTED", "DECLINED")
            find_attendee(new, USER).params["PARTSTAT"] = "NEEDS-ACTION"
            assert new.to_ical() == old.to_ical(), uid
    for uid in ("cancelled", "allday"):
        event = next(iter(server_copy(calendar, uid).walk("VEVENT")))
        assert find_attendee(event, USER).params["PARTSTAT"] == "NEEDS-ACTION"
    # One iMIP mail per answer, each a valid REPLY to its invitation.
    assert len(inbox.messages) == 5
    for message in inbox.messages:
        assert message.get_content_type() == "multipart/alternative"
        parts = {part.get_content_type(): part for part in message.walk()}
        part = parts["text/calendar"]
        assert part.get_param("method") == "REPLY" and part.get_content_charset() == "utf-8"
        reply = read_calendar(part.get_payload(decode=True))
        (event,) = reply.walk("VEVENT")
        original = before[str(event["UID"])]
        request = icalendar.Calendar()
        for component in original.subcomponents:
            if component.name == "VTIMEZONE" or (
                component.name == "VEVENT"
                and ("RECURRENCE-ID" in component) == ("RECURRENCE-ID" in event)
            ):
                request.add_component(component)
        assert reply_problems(reply, request) == [], str(event["UID"])
        assert message["To"] == "boss@org.example"
    # A second pass sends nothing again.
    status, again, _ = run_sync(
        radicale, setting, tmp_path, capsys, "--ask-band", "0", "--smtp", smtp_address
    )
    assert status == 0 and len(inbox.messages) == 5
    assert not [o for o in again if o["action"].startswith("answered on")]
    # The organiser updates one invitation (SEQUENCE 2, a new time): decided afresh.
    current = int(next(iter(server_copy(calendar, "updated").walk("VEVENT")))["SEQUENCE"])
    updated = vevent("updated", "20261105T150000", "20261105T160000", sequence=current + 1)
    put_raw(client, calendar, "updated", vcalendar(updated, zones=NEW_YORK_ZONE + "\n"))
    status, third, _ = run_sync(
        radicale, setting, tmp_path, capsys, "--ask-band", "0", "--smtp", smtp_address
    )
    fresh = [(o["uid"], o["sequence"]) for o in third if o["action"].startswith("answered on")]
    assert fresh == [("updated", current + 1)]
    assert len(inbox.messages) == 6, [o["action"] for o in third]


def test_asks_then_learns_the_persons_own_answer(radicale, setting, tmp_path, capsys):
    from clusterednb.service.store import ServiceStore

    client, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "0", "--dry-run")
    assert [o["action"] for o in outcomes] == ["would answer"]
    assert not (tmp_path / "state.db").exists()  # a dry run writes nothing at all
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "100")
    assert [o["action"] for o in outcomes] == ["asked the person"]
    event = next(iter(server_copy(calendar, "ny").walk("VEVENT")))
    assert find_attendee(event, USER).params["PARTSTAT"] == "NEEDS-ACTION"  # left alone
    # The person accepts in their own calendar client.
    text = calendar.event_by_uid("ny").data.replace("PARTSTAT=NEEDS-ACTION", "PARTSTAT=ACCEPTED")
    put_raw(client, calendar, "ny", text)
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "100")
    assert [o["action"] for o in outcomes] == ["learned the answer (accepted)"]
    with ServiceStore(tmp_path / "state.db") as store:
        assert [a["answer"] for a in store.answered()] == ["accept"]


def test_a_concurrent_change_on_the_server_is_reread_not_overwritten(radicale, tmp_path):
    from clusterednb.service.passes.caldav_server import set_partstat

    client, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    href = str(calendar.event_by_uid("ny").url)
    other = caldav.DAVClient(url=radicale, username="ann", password="secret")

    class Racing:
        """The real client; just before its first write another client edits the event."""

        def __init__(self) -> None:
            self.raced = False

        def request(self, url, method="GET", body="", headers=None):
            if method == "PUT" and not self.raced:
                self.raced = True
                current = other.request(url, "GET").raw
                text = current if isinstance(current, str) else current.decode()
                edited = text.replace("SUMMARY:Budget review", "SUMMARY:Budget review (room 4)")
                assert other.request(
                    url, "PUT", edited.encode(), {"Content-Type": "text/calendar"}
                ).status in (201, 204)
            return client.request(url, method, body, headers or {})

    assert set_partstat(Racing(), href, "ny", "", USER, "DECLINED") == "written"
    event = next(iter(server_copy(calendar, "ny").walk("VEVENT")))
    assert str(event["SUMMARY"]) == "Budget review (room 4)"  # the other edit survived
    assert find_attendee(event, USER).params["PARTSTAT"] == "DECLINED"


def test_an_unreachable_server_or_a_refused_login_is_one_line_and_exit_2(
    radicale, setting, tmp_path, capsys
):
    for url, password in ((radicale, "wrong"), (f"http://127.0.0.1:{free_port()}/", "secret")):
        args = sync_args(url, setting, tmp_path, password)
        assert main(args) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("cnb: error:") and len(error.splitlines()) == 1
        assert not (tmp_path / "state.db").exists()  # nothing half-written


def test_a_malformed_event_on_the_server_is_skipped_by_href(radicale, setting, tmp_path, capsys):
    client, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    broken = vcalendar(
        vevent("broken", "20261104T120000", "20261104T123000", sequence=0),
        zones=NEW_YORK_ZONE + "\n",
    ).replace("SEQUENCE:0", "SEQUENCE:abc")
    href = str(calendar.url) + "broken.ics"
    response = client.request(
        href,
        "PUT",
        broken.replace("\n", "\r\n").encode(),
        {"Content-Type": "text/calendar; charset=utf-8"},
    )
    assert response.status in (201, 204)  # the server stores it as it is
    status, outcomes, err = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "0")
    assert status == 0
    assert "broken.ics skipped" in err and "SEQUENCE" in err
    assert [o["uid"] for o in outcomes] == ["ny"]  # the pass went on


def test_the_password_comes_from_a_file_the_environment_or_a_flag_with_a_warning(
    radicale, setting, tmp_path, capsys, monkeypatch
):
    upload(radicale, {"ny": INVITATIONS["ny"]})
    base = sync_args(radicale, setting, tmp_path)
    at = base.index("--password-file")
    without = base[:at] + base[at + 2 :]
    monkeypatch.setenv("CNB_CALDAV_PASSWORD", "secret")
    assert main([*without, "--dry-run"]) == 0
    assert "warning" not in capsys.readouterr().err
    monkeypatch.delenv("CNB_CALDAV_PASSWORD")
    assert main([*without, "--password", "secret", "--dry-run"]) == 0
    assert "--password shows in the process list" in capsys.readouterr().err
    assert main([*without, "--dry-run"]) == 1  # no terminal here to ask on
    assert "no password" in capsys.readouterr().err
    assert not (tmp_path / "state.db").exists()


def test_a_self_signed_server_is_one_line_and_a_ca_bundle_trusts_it(setting, tmp_path, capsys):
    """A TLS server on 127.0.0.1 with a throw-away self-signed certificate: refused with one
    line naming the cause (exit 2), then trusted with --ca-bundle (the pass goes on to ask
    the server, which is no CalDAV server: a different one-line error)."""
    import http.server
    import ssl
    import threading

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_):  # the test server's own log is not the command's
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/"
        args = sync_args(url, setting, tmp_path)
        assert main(args) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and " at 0x" not in error
        assert "TLS certificate cannot be verified" in error and "--ca-bundle" in error
        assert main([*args, "--ca-bundle", str(cert)]) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and "TLS" not in error
        assert not (tmp_path / "state.db").exists()
    finally:
        server.shutdown()


def test_an_ask_can_answer_tentative_with_a_comment_until_the_person_decides(
    radicale, smtp, setting, tmp_path, capsys
):
    """--on-ask tentative: the invitation is TENTATIVE on the server and by mail (with the
    COMMENT, a valid RFC 5546 REPLY), the next pass keeps waiting, and the person's own
    answer in their client is learnt."""
    from clusterednb.meeting.reply import reply_problems
    from clusterednb.service.store import ServiceStore

    inbox, smtp_address = smtp
    client, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    request = server_copy(calendar, "ny")  # as the server keeps it
    extra = (
        "--ask-band",
        "100",
        "--on-ask",
        "tentative",
        "--smtp",
        smtp_address,
        "--comment",
        "My assistant will confirm soon.",
    )
    status, outcomes, err = run_sync(radicale, setting, tmp_path, capsys, *extra)
    assert status == 0, err
    assert [o["action"] for o in outcomes] == [
        "asked the person; tentative on the server and by mail"
    ]
    event = next(iter(server_copy(calendar, "ny").walk("VEVENT")))
    assert find_attendee(event, USER).params["PARTSTAT"] == "TENTATIVE"
    (message,) = inbox.messages
    assert message["Subject"].startswith("Tentative: ")
    part = next(p for p in message.walk() if p.get_content_type() == "text/calendar")
    reply = read_calendar(part.get_payload(decode=True))
    (answer,) = reply.walk("VEVENT")
    assert find_attendee(answer, USER).params["PARTSTAT"] == "TENTATIVE"
    assert str(answer["COMMENT"]) == "My assistant will confirm soon."
    assert reply_problems(reply, request) == []
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, *extra)
    assert outcomes[0]["action"] == "still waiting for the person (tentative on the server)"
    text = calendar.event_by_uid("ny").data.replace("PARTSTAT=TENTATIVE", "PARTSTAT=ACCEPTED")
    put_raw(client, calendar, "ny", text)
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, *extra)
    assert outcomes[0]["action"] == "learned the answer (accepted)"
    with ServiceStore(tmp_path / "state.db") as store:
        assert [(r["uid"], r["answer"]) for r in store.answered()] == [("ny", "accept")]
    assert len(inbox.messages) == 1  # nothing sent again


def test_a_cancelled_meeting_closes_the_pending_question(radicale, setting, tmp_path, capsys):
    from clusterednb.service.store import ServiceStore

    client, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "100")
    assert [o["action"] for o in outcomes] == ["asked the person"]
    text = calendar.event_by_uid("ny").data.replace("END:VEVENT", "STATUS:CANCELLED\nEND:VEVENT")
    put_raw(client, calendar, "ny", text)
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, "--ask-band", "100")
    assert [o["action"] for o in outcomes] == ["cancelled: the question closed"]
    with ServiceStore(tmp_path / "state.db") as store:
        assert store.counts()["requests"] == 0
    event = next(iter(server_copy(calendar, "ny").walk("VEVENT")))
    assert find_attendee(event, USER).params["PARTSTAT"] == "NEEDS-ACTION"  # never answered


@pytest.mark.parametrize("on_ask", ["none", "tentative"])
def test_an_answer_given_on_the_page_reaches_the_calendar_on_the_next_pass(
    radicale, smtp, setting, tmp_path, capsys, on_ask
):
    """sync asks → the person answers through the service (its store, as the page and the
    API do) → the next pass sets PARTSTAT under the ETag and mails the organiser → the store
    holds one answer, and a third pass sends nothing again."""
    from clusterednb.service.store import ServiceStore

    inbox, smtp_address = smtp
    _, calendar = upload(radicale, {"ny": INVITATIONS["ny"]})
    extra = ("--ask-band", "100", "--on-ask", on_ask, "--smtp", smtp_address)
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, *extra)
    assert outcomes[0]["action"].startswith("asked the person")
    sent_before = len(inbox.messages)
    with ServiceStore(tmp_path / "state.db") as store:
        assert store.answered() == []
        (record,) = store.requests("ann")  # the directory's user of USER
        store.answer("ann", record["id"], accepted=True)
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, *extra)
    assert outcomes[0]["action"] == (
        "passed on the person's answer (accepted): answered on the server and by mail"
    )
    event = next(iter(server_copy(calendar, "ny").walk("VEVENT")))
    assert find_attendee(event, USER).params["PARTSTAT"] == "ACCEPTED"
    assert len(inbox.messages) == sent_before + 1
    _, outcomes, _ = run_sync(radicale, setting, tmp_path, capsys, *extra)
    assert outcomes == [] and len(inbox.messages) == sent_before + 1  # nothing again
    with ServiceStore(tmp_path / "state.db") as store:
        assert [(r["uid"], r["answer"]) for r in store.answered()] == [("ny", "accept")]
