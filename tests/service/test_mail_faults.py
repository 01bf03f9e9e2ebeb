"""Faults of the mailbox pass against Debian's Dovecot and an SMTP sink: an IMAP connection
cut at every point of a pass, two passes at once on one store, a server that keeps no
keywords, and an SMTP outage. Each invitation gets exactly one REPLY; no question is asked or
closed twice."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_mailbox import mail_args

from calendar_servers import USER
from clusterednb.cli import main
from clusterednb.service.store import ServiceStore
from fault_servers import CuttingProxy, FaultySMTP
from mail_messages import google, plain, vcalendar, vevent

pytest.importorskip("aiosmtpd", reason="aiosmtpd is not installed")


def messages(n: int) -> list[bytes]:
    """``n`` invitations to USER (every third in Google's layout: the calendar twice)."""
    found = []
    for i in range(n):
        day, hour = 2 + i % 5, 9 + i // 5
        text = vcalendar(
            vevent(f"i{i}", f"202611{day:02d}T{hour:02d}0000", f"202611{day:02d}T{hour:02d}3000",
                   attendee=USER, summary=f"Meeting {i}")
        )  # fmt: skip
        maker = google if i % 3 == 0 else plain
        found.append(maker(f"i{i}@org.example", text, USER))
    return found


@pytest.fixture
def sink():
    found = FaultySMTP()
    yield found
    found.stop()


def pass_args(dovecot, setting, tmp_path, sink, *extra, port=None):
    return mail_args(
        dovecot, setting, tmp_path, "--smtp", sink.address, "--from", USER, "--ask-band", "0",
        *extra, port=port,
    )  # fmt: skip


def replies(sink, n):
    per_uid = sink.replies_per_uid()
    return [per_uid[(f"i{i}", "")] for i in range(n)]


def test_an_imap_connection_cut_anywhere_loses_and_repeats_nothing(
    dovecot, sink, setting, tmp_path, capsys
):
    n = 4
    dovecot.deliver(*messages(n))
    proxy = CuttingProxy(("127.0.0.1", dovecot.imaps))
    try:
        args = pass_args(dovecot, setting, tmp_path, sink, port=proxy.port)
        for cut_after in (40, 120, 240, 400, 600, 900, 1000, 1100, 1200, 1300, 1600, 2000):
            proxy.cut_connection, proxy.cut_after = proxy.connections + 1, cut_after
            status = main(args)
            captured = capsys.readouterr()
            assert status in (0, 2), captured.err
            assert "Traceback" not in captured.err
            if status == 2:
                assert captured.err.count("\n") == 1 and "IMAP server" in captured.err
        proxy.cut_connection = None
        assert main(args) == 0
        capsys.readouterr()
    finally:
        proxy.stop()
    assert replies(sink, n) == [1] * n
    with ServiceStore(tmp_path / "mail-state.db") as store:
        assert len(store.requests("ann")) == n


def test_two_mail_passes_at_once_mail_each_answer_once(dovecot, sink, setting, tmp_path):
    n = 10
    dovecot.deliver(*messages(n))
    command = [sys.executable, "-m", "clusterednb.cli",
               *pass_args(dovecot, setting, tmp_path, sink)]  # fmt: skip
    passes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]  # fmt: skip
    for process in passes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()
    assert replies(sink, n) == [1] * n


def strip_keywords(dovecot) -> None:
    """Take the assistant's keywords off every message (a server that keeps none)."""
    connection = dovecot.connect()
    connection.uid("STORE", "1:*", "-FLAGS", "($CNBAnswered $CNBAsked)")
    connection.logout()


def test_a_server_that_keeps_no_keywords_asks_closes_and_mails_once(
    dovecot, sink, setting, tmp_path, capsys
):
    cal = vcalendar
    dovecot.deliver(
        *messages(2),
        plain("ask@org.example", cal(vevent("asked", "20261104T100000", "20261104T103000",
                                            attendee=USER)), USER),
        plain("gone@org.example", cal(vevent("gone", "20261105T100000", "20261105T103000",
                                             attendee=USER)), USER),
    )  # fmt: skip
    asks = pass_args(dovecot, setting, tmp_path, sink)
    asks[asks.index("--ask-band") + 1] = "100"  # everything asked
    assert main(asks) == 0
    capsys.readouterr()
    cancel = plain("cancel@org.example", cal(vevent("gone", "20261105T100000",
        "20261105T103000", attendee=USER, sequence=1), method="CANCEL"), USER)  # fmt: skip
    dovecot.deliver(cancel)
    with ServiceStore(tmp_path / "mail-state.db") as store:
        (record,) = [r for r in store.requests("ann") if r["uid"] == "i0"]
        store.answer("ann", record["id"], accepted=True)
    said = []
    for _ in range(3):
        strip_keywords(dovecot)
        assert main(asks) == 0
        said.extend(o for o in __import__("json").loads(capsys.readouterr().out))
    assert [o["action"] for o in said if o["action"].startswith("asked")] == []
    closes = [o for o in said if o["action"] == "cancelled: the question closed"]
    assert len(closes) == 1
    assert sink.replies_per_uid() == {("i0", ""): 1}  # the person's answer, once
    with ServiceStore(tmp_path / "mail-state.db") as store:
        assert sorted(r["uid"] for r in store.requests("ann")) == ["asked", "i0", "i1"]


def test_an_smtp_outage_owes_the_replies_and_the_next_pass_sends_them_once(
    dovecot, sink, setting, tmp_path, capsys
):
    n = 3
    dovecot.deliver(*messages(n))
    args = pass_args(dovecot, setting, tmp_path, sink)
    sink.down()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"the SMTP server {sink.address} did not take the reply" in err
    sink.up()
    for _ in range(2):
        assert main(args) == 0
    capsys.readouterr()
    assert replies(sink, n) == [1] * n


def test_plain_dry_run_and_watch_output(dovecot, sink, setting, tmp_path, capsys):
    dovecot.deliver(*messages(2))
    plain_args = [a for a in pass_args(dovecot, setting, tmp_path, sink) if a != "--json"]
    assert main([*plain_args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.count("would answer") == 2
    assert main(plain_args) == 0
    out = capsys.readouterr().out
    assert "Meeting 0" in out and "by mail" in out
    assert main([*plain_args, "--watch", "--every", "0.2", "--passes", "2"]) == 0
    assert capsys.readouterr().out.count("no invitation waiting") == 2


def test_a_tls_mismatch_says_what_to_try(dovecot, sink, setting, tmp_path, capsys, monkeypatch):
    from clusterednb.service.passes.mail import imap

    monkeypatch.setattr(imap, "TIMEOUT", 3.0)
    implicit_on_starttls = pass_args(dovecot, setting, tmp_path, sink, port=dovecot.imap)
    assert main(implicit_on_starttls) == 2
    assert "on a STARTTLS port try --starttls" in capsys.readouterr().err
    starttls_on_implicit = pass_args(dovecot, setting, tmp_path, sink, "--starttls")
    assert main(starttls_on_implicit) == 2
    assert "try without --starttls" in capsys.readouterr().err


def test_capabilities_are_read_again_after_login(dovecot):
    """Servers announce some capabilities (IDLE on pymap, SORT on Dovecot) only once logged
    in; imaplib keeps the list from before the login unless asked again."""
    import imaplib
    import ssl

    from clusterednb.service.passes.mail.imap import ImapAccount, connect

    context = ssl.create_default_context(cafile=str(dovecot.cert))
    before = imaplib.IMAP4_SSL("127.0.0.1", dovecot.imaps, ssl_context=context)
    assert "SORT" not in before.capabilities  # announced after login only
    before.logout()
    account = ImapAccount("127.0.0.1", dovecot.imaps, USER, password="secret",
                          ca_bundle=dovecot.cert)  # fmt: skip
    connection = connect(account)
    assert "SORT" in connection.capabilities and "IDLE" in connection.capabilities
    connection.logout()


def test_a_correction_on_the_page_is_mailed_to_the_organiser(
    dovecot, sink, setting, tmp_path, capsys
):
    import icalendar

    dovecot.deliver(*messages(1))
    args = pass_args(dovecot, setting, tmp_path, sink)
    assert main(args) == 0
    with ServiceStore(tmp_path / "mail-state.db") as store:
        (record,) = store.requests("ann")
        first = record["partstat"]
        store.answer("ann", record["id"], accepted=first == "DECLINED")  # the other answer
    for _ in range(2):
        assert main(args) == 0
    capsys.readouterr()
    said = []
    for message in sink.messages:
        (part,) = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
        event = next(
            iter(icalendar.Calendar.from_ical(part.get_payload(decode=True)).walk("VEVENT"))
        )
        said.append(str(event["ATTENDEE"].params["PARTSTAT"]))
    assert said == [first, "ACCEPTED" if first == "DECLINED" else "DECLINED"]
