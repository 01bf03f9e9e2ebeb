"""``cnb meeting mail`` against real servers started by the tests: Debian's Dovecot (IMAPS and
STARTTLS on 127.0.0.1, a throw-away certificate) and aiosmtpd."""

from __future__ import annotations

import json

import pytest

from calendar_servers import USER
from clusterednb.cli import main
from clusterednb.meeting.invitation import read_calendar
from clusterednb.meeting.reply import reply_problems
from mail_messages import (
    W_EUROPE,
    apple,
    crlf,
    forwarded,
    google,
    outlook,
    plain,
    two_parts,
    vcalendar,
    vevent,
)

pytest.importorskip("aiosmtpd", reason="aiosmtpd is not installed")
vobject = pytest.importorskip("vobject", reason="vobject (the independent parser) is missing")


def mail_args(dovecot, setting, tmp_path, *extra, port=None):
    secret = tmp_path / "imap-password"
    secret.write_text("secret\n")
    secret.chmod(0o600)
    return [
        "meeting", "mail", "--imap", f"127.0.0.1:{port or dovecot.imaps}", "--username", USER,
        "--password-file", str(secret), "--ca-bundle", str(dovecot.cert), "--user", USER,
        "--model", str(setting / "model.cnb"), "--directory", str(setting / "directory.json"),
        "--state", str(tmp_path / "mail-state.db"), "--json", *extra,
    ]  # fmt: skip


def run_mail(args, capsys):
    status = main(args)
    captured = capsys.readouterr()
    return status, (json.loads(captured.out) if status == 0 else None), captured.err


def invitations():
    cal = vcalendar
    return {
        "outlook": outlook("outlook@org.example", cal(
            vevent("outlook-1", "20261104T160000", "20261104T163000", attendee=USER,
                   zone="W. Europe Standard Time",
                   extra="X-MICROSOFT-CDO-BUSYSTATUS:TENTATIVE\nX-MICROSOFT-CDO-IMPORTANCE:1\n"),
            prodid="-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN", zones=W_EUROPE), USER),
        "google": google("google@org.example", cal(
            vevent("google-1", "20261105T140000", "20261105T150000", attendee=USER)), USER),
        "apple": apple("apple@org.example", cal(
            vevent("apple-1", "20261105T100000", "20261105T103000", attendee=USER)), USER),
        "weekly": plain("weekly@org.example", cal(
            vevent("weekly", "20261102T090000", "20261102T093000", attendee=USER,
                   extra="RRULE:FREQ=WEEKLY;COUNT=6\n"),
            vevent("weekly", "20261109T140000", "20261109T143000", attendee=USER,
                   extra="RECURRENCE-ID;TZID=America/New_York:20261109T090000\n")), USER),
        "two": two_parts("two@org.example",
            cal(vevent("two-a", "20261103T110000", "20261103T113000", attendee=USER)),
            cal(vevent("two-b", "20261103T150000", "20261103T160000", attendee=USER)), USER),
        "forwarded": forwarded("fwd@org.example", apple("inner@org.example", cal(
            vevent("fwd-1", "20261106T100000", "20261106T110000", attendee=USER)), USER), USER),
        "reply": plain("reply@org.example", cal(
            vevent("theirs", "20261104T100000", "20261104T110000", attendee="bob@org.example"),
            method="REPLY"), USER, sender="bob@org.example"),
        "own": plain("own@org.example", cal(
            vevent("own-1", "20261104T100000", "20261104T110000", attendee=USER,
                   organizer=USER)), USER),
        "notme": plain("notme@org.example", cal(
            vevent("notme-1", "20261104T100000", "20261104T110000",
                   attendee="someone@org.example")), "someone@org.example"),
        "broken": plain("broken@org.example", crlf("BEGIN:VCALENDAR\nthis is not iCalendar"),
                        USER),
        "no-calendar": (b"From: a@org.example\r\nMessage-ID: <nocal@org.example>\r\n"
                        b"Content-Type: text/plain\r\n\r\nLunch?\r\n"),
    }  # fmt: skip


def test_one_pass_answers_every_client_s_invitations_by_mail(
    dovecot, smtp, setting, tmp_path, capsys
):
    inbox, smtp_address = smtp
    messages = invitations()
    dovecot.deliver(*messages.values())
    extra = ("--smtp", smtp_address, "--from", USER, "--ask-band", "0")
    status, outcomes, err = run_mail(mail_args(dovecot, setting, tmp_path, *extra), capsys)
    assert status == 0, err
    by_key = {(o["uid"], o["recurrence_id"]): o for o in outcomes}
    answered = [
        ("outlook-1", ""), ("google-1", ""), ("apple-1", ""), ("weekly", ""),
        ("weekly", "20261109T090000"), ("two-a", ""), ("two-b", ""), ("fwd-1", ""),
    ]  # fmt: skip
    for key in answered:
        assert key in by_key and by_key[key]["action"].startswith("answered "), sorted(by_key)
        assert by_key[key]["decision"] in ("accept", "decline")
    assert by_key[("theirs", "")]["action"].startswith("not answered: a REPLY")
    assert by_key[("own-1", "")]["action"] == "refused: the person is the organiser"
    assert by_key[("notme-1", "")]["action"] == "refused: the person is not invited"
    assert "broken@org.example" in err  # the malformed message named, the pass went on
    # the Google message carries the calendar twice: counted, decided and answered once
    assert sum(o["uid"] == "google-1" for o in outcomes) == 1
    assert len(inbox.messages) == len(answered)
    for message in inbox.messages:
        assert message["To"] == "boss@org.example"
        assert message.get_content_type() == "multipart/alternative"
        (part,) = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
        assert part.get_param("method") == "REPLY"
        data = part.get_payload(decode=True)
        assert all(len(line) <= 75 for line in data.split(b"\r\n"))
        reply = read_calendar(data)
        assert reply_problems(reply) == []
        parsed = vobject.readOne(data.decode())  # an independent parser
        assert parsed.method.value == "REPLY"
        assert parsed.vevent.attendee.value.lower() == f"mailto:{USER}"
        assert parsed.vevent.attendee.params["PARTSTAT"][0] in ("ACCEPTED", "DECLINED")
    flags = dovecot.flags()
    dealt = ("outlook", "google", "two", "fwd", "own", "reply")
    for message_id in (f"<{name}@org.example>" for name in dealt):
        assert {"$CNBAnswered", "\\Seen"} <= flags[message_id], message_id
    assert "$CNBAnswered" not in flags["<broken@org.example>"]
    assert flags["<nocal@org.example>"] == set()
    # a second pass sends nothing again
    status, again, _ = run_mail(mail_args(dovecot, setting, tmp_path, *extra), capsys)
    assert status == 0 and not [o for o in again if o["action"].startswith("answered ")]
    assert len(inbox.messages) == len(answered)
    # the organiser updates the Google meeting (a higher SEQUENCE): decided afresh
    update = google(
        "google-2@org.example",
        vcalendar(
            vevent("google-1", "20261105T160000", "20261105T170000", attendee=USER, sequence=1)
        ),
        USER,
    )
    dovecot.deliver(update)
    status, again, _ = run_mail(mail_args(dovecot, setting, tmp_path, *extra), capsys)
    assert [o["action"].split(" ")[0] for o in again] == ["answered"]
    assert again[0]["sequence"] == 1 and len(inbox.messages) == len(answered) + 1


def test_an_ask_stays_unread_the_persons_answer_is_mailed_and_a_cancel_closes(
    dovecot, smtp, setting, tmp_path, capsys
):
    from clusterednb.service.store import ServiceStore

    inbox, smtp_address = smtp
    cal = vcalendar
    dovecot.deliver(
        plain("ask-1@org.example", cal(vevent("ask-1", "20261104T100000", "20261104T103000",
                                              attendee=USER)), USER),
        plain("ask-2@org.example", cal(vevent("ask-2", "20261105T100000", "20261105T103000",
                                              attendee=USER)), USER),
    )  # fmt: skip
    extra = ("--smtp", smtp_address, "--ask-band", "100", "--comment", "My assistant asks me.")
    status, outcomes, err = run_mail(mail_args(dovecot, setting, tmp_path, *extra), capsys)
    assert status == 0, err
    assert [o["action"] for o in outcomes] == ["asked the person", "asked the person"]
    flags = dovecot.flags()
    assert "$CNBAsked" in flags["<ask-1@org.example>"]
    assert "\\Seen" not in flags["<ask-1@org.example>"]  # left unread for the person
    assert inbox.messages == []
    with ServiceStore(tmp_path / "mail-state.db") as store:
        asked = {r["uid"]: r for r in store.requests("ann")}
        store.answer("ann", asked["ask-1"]["id"], accepted=True)
    cancel = plain("cancel@org.example", cal(vevent("ask-2", "20261105T100000",
        "20261105T103000", attendee=USER, sequence=1), method="CANCEL"), USER)  # fmt: skip
    dovecot.deliver(cancel)
    status, outcomes, _ = run_mail(mail_args(dovecot, setting, tmp_path, *extra), capsys)
    actions = {o["uid"]: o["action"] for o in outcomes}
    assert actions["ask-1"] == "passed on the person's answer: answered accepted by mail"
    assert actions["ask-2"].startswith(("still waiting", "cancelled: the question closed"))
    assert any(o["action"] == "cancelled: the question closed" for o in outcomes)
    (mailed,) = inbox.messages
    (part,) = [p for p in mailed.walk() if p.get_content_type() == "text/calendar"]
    assert b"COMMENT:My assistant asks me." in part.get_payload(decode=True)
    assert {"$CNBAnswered", "\\Seen"} <= dovecot.flags()["<ask-1@org.example>"]
    with ServiceStore(tmp_path / "mail-state.db") as store:
        assert [r["uid"] for r in store.requests("ann") if r["answer"] is None] == []


def test_starttls_dry_run_and_refused_logins(dovecot, smtp, setting, tmp_path, capsys):
    inbox, smtp_address = smtp
    dovecot.deliver(plain("dry@org.example", vcalendar(vevent(
        "dry-1", "20261104T100000", "20261104T103000", attendee=USER)), USER))  # fmt: skip
    args = mail_args(dovecot, setting, tmp_path, "--starttls", "--dry-run", port=dovecot.imap)
    status, outcomes, err = run_mail(args, capsys)
    assert status == 0, err
    assert [o["action"] for o in outcomes] in (["would answer"], ["would ask"])
    assert not (tmp_path / "mail-state.db").exists()  # a dry run writes nothing at all
    assert dovecot.flags()["<dry@org.example>"] == set() and inbox.messages == []
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    wrong.chmod(0o600)
    args = mail_args(dovecot, setting, tmp_path, "--smtp", smtp_address)
    args[args.index("--password-file") + 1] = str(wrong)
    status, _, err = run_mail(args, capsys)
    assert status == 2 and "refused the login" in err and "not-the-password" not in err
    assert len(err.strip().splitlines()) == 1
    untrusted = [a for a in args if a not in ("--ca-bundle", str(dovecot.cert))]
    status, _, err = run_mail(untrusted, capsys)
    assert status == 2 and "certificate" in err
    assert not (tmp_path / "mail-state.db").exists()


def test_an_oauth_token_by_xoauth2_and_a_refused_one(dovecot, smtp, setting, tmp_path, capsys):
    """SASL XOAUTH2 (as Microsoft 365 and Gmail require), Dovecot checking the token with an
    introspection endpoint (RFC 7662) on 127.0.0.1."""
    inbox, smtp_address = smtp
    dovecot.deliver(plain("oauth@org.example", vcalendar(vevent(
        "oauth-1", "20261104T100000", "20261104T103000", attendee=USER)), USER))  # fmt: skip
    token = tmp_path / "token"
    token.write_text(dovecot.token + "\n")
    token.chmod(0o600)
    args = mail_args(dovecot, setting, tmp_path, "--smtp", smtp_address, "--ask-band", "0")
    position = args.index("--password-file")
    args[position : position + 2] = ["--oauth-token-file", str(token)]
    status, outcomes, err = run_mail(args, capsys)
    assert status == 0, err
    assert [o["action"].split(" ")[0] for o in outcomes] == ["answered"]
    assert len(inbox.messages) == 1
    token.write_text("expired-token\n")
    status, _, err = run_mail(args, capsys)
    assert status == 2 and "refused the login" in err and "expired-token" not in err


def test_watch_wakes_on_new_mail_by_imap_idle(dovecot, smtp, setting, tmp_path):
    """``--watch`` waits with IMAP IDLE: a message delivered while it waits is answered long
    before the polling interval (30 s) would have come round; ``--passes 2`` ends it."""
    import os
    import subprocess
    import sys
    import time

    inbox, smtp_address = smtp
    args = mail_args(dovecot, setting, tmp_path, "--smtp", smtp_address, "--ask-band", "0")
    command = [sys.executable, "-m", "clusterednb.cli", *args, "--watch", "--every", "30",
               "--passes", "2"]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ}
    )
    try:
        assert process.stdout.readline().strip() == "[]"  # the first pass found nothing
        time.sleep(1)  # and the command idles
        started = time.monotonic()
        dovecot.deliver(plain("idle@org.example", vcalendar(vevent(
            "idle-1", "20261104T100000", "20261104T103000", attendee=USER)), USER))  # fmt: skip
        out, err = process.communicate(timeout=60)
        waited = time.monotonic() - started
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert waited < 25, waited  # woken by IDLE, not by the 30 s interval
    assert len(inbox.messages) == 1 and "idle-1" in out


def test_the_service_reads_a_registered_mailbox_on_its_schedule(
    dovecot, smtp, setting, tmp_path, capsys
):
    import time

    from service_helpers import Server, call

    pytest.importorskip("fastapi", reason="the service extra is not installed")
    inbox, smtp_address = smtp
    store = tmp_path / "service.db"
    assert main(["users", "add", "ann", "--email", USER, "--store", str(store)]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    secret = tmp_path / "imap-password"
    secret.write_text("secret\n")
    secret.chmod(0o600)
    command = ["users", "mailbox", "ann", "--store", str(store), "--imap",
               f"127.0.0.1:{dovecot.imaps}", "--username", USER, "--password-file", str(secret),
               "--ca-bundle", str(dovecot.cert)]  # fmt: skip
    assert main(command) == 0 and "readable by you only" in capsys.readouterr().out
    dovecot.deliver(plain("served@org.example", vcalendar(vevent(
        "served-1", "20261104T100000", "20261104T103000", attendee=USER)), USER))  # fmt: skip
    extra = ("--model", str(setting / "model.cnb"), "--directory", str(setting / "directory.json"),
             "--ask-band", "0", "--sync-every", "0.02", "--smtp", smtp_address)  # fmt: skip
    with Server(store, *extra) as server:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not inbox.messages:
            time.sleep(0.3)
        (stored,) = call(server, "GET", "/api/requests", token)[1]
        assert stored["uid"] == "served-1" and stored["decision"] in ("accept", "decline")
        assert len(inbox.messages) == 1
        log = server.log.read_text()
        assert "mailbox pass for ann" in log and "secret" not in log
    assert "$CNBAnswered" in dovecot.flags()["<served@org.example>"]


def test_conflicts_come_from_the_persons_caldav_account(
    dovecot, smtp, setting, radicale, tmp_path, capsys
):
    """The person's calendar on a CalDAV server (Radicale) is read for busy time: an
    invitation over a dentist's appointment there has a conflict."""
    from caldav_helpers import INVITATIONS, upload
    from clusterednb.service.store import ServiceStore

    _, smtp_address = smtp
    upload(radicale, {"busy": INVITATIONS["busy"]})  # 4 November, 10:00-11:00 New York
    dovecot.deliver(plain("clash@org.example", vcalendar(vevent(
        "clash-1", "20261104T100000", "20261104T103000", attendee=USER)), USER))  # fmt: skip
    password = tmp_path / "caldav-password"
    password.write_text("secret\n")
    password.chmod(0o600)
    extra = ("--smtp", smtp_address, "--caldav", radicale, "--caldav-username", "ann",
             "--caldav-password-file", str(password))  # fmt: skip
    status, outcomes, err = run_mail(mail_args(dovecot, setting, tmp_path, *extra), capsys)
    assert status == 0, err
    assert [o["uid"] for o in outcomes] == ["clash-1"]
    with ServiceStore(tmp_path / "mail-state.db") as store:
        (record,) = store.requests("ann")
    assert record["uid"] == "clash-1" and record["features"]["conflict"] == "yes"
