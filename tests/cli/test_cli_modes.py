"""Every command in every mode it offers (plain text, ``--json``, ``--dry-run``, ``--watch``):
each pair runs somewhere in the suite, and :func:`test_every_command_and_mode_is_run` fails when
a command or a mode is added without a test that runs it. The plain runs here read what a
person reads: no traceback, a sentence per result."""

from __future__ import annotations

import argparse
import importlib
import json

import numpy as np
import pytest

from caldav_helpers import INVITATIONS, sync_args, upload
from clusterednb.cli import build_parser, main
from clusterednb.data.synthetic import make_planted_population

MODES = ("--json", "--dry-run", "--watch")
RUN_BY = {
    ("fit", "plain"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("fit", "--json"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("predict", "plain"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("predict", "--json"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("evidence", "plain"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("evidence", "--json"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("evaluate", "plain"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("evaluate", "--json"):
        "test_cli_conventions::test_every_evaluation_protocol_runs_from_the_command_line",
    ("demo", "plain"): "test_cli::test_demo_runs_and_writes_a_self_contained_report",
    ("warm-up", "plain"): "test_cli_modes::test_library_commands_in_plain_and_json",
    ("meeting simulate", "plain"): "test_cli_modes::test_meeting_commands_in_plain_and_json",
    ("meeting decide", "plain"): "test_cli_modes::test_meeting_commands_in_plain_and_json",
    ("meeting decide", "--json"): "test_cli_modes::test_meeting_commands_in_plain_and_json",
    ("meeting learn", "plain"): "test_cli_modes::test_meeting_commands_in_plain_and_json",
    ("meeting fit", "plain"): "test_cli_modes::test_meeting_commands_in_plain_and_json",
    ("meeting sync", "plain"): "test_cli_modes::test_sync_in_plain_dry_run_and_json",
    ("meeting sync", "--json"): "test_cli_modes::test_sync_in_plain_dry_run_and_json",
    ("meeting sync", "--dry-run"): "test_cli_modes::test_sync_in_plain_dry_run_and_json",
    ("meeting mail", "plain"): "test_mail_faults::test_plain_dry_run_and_watch_output",
    ("meeting mail", "--json"):
        "test_mailbox::test_one_pass_answers_every_client_s_invitations_by_mail",
    ("meeting mail", "--dry-run"): "test_mail_faults::test_plain_dry_run_and_watch_output",
    ("meeting mail", "--watch"): "test_mail_faults::test_plain_dry_run_and_watch_output",
    ("serve", "plain"): "test_service_faults::test_health_and_metrics_follow_the_failing_passes",
    ("users add", "plain"): "test_cli_modes::test_users_commands_in_plain",
    ("users list", "plain"): "test_cli_modes::test_users_commands_in_plain",
    ("users revoke", "plain"): "test_cli_modes::test_users_commands_in_plain",
    ("users calendar", "plain"): "test_cli_modes::test_registering_a_calendar_tries_the_login",
    ("users mailbox", "plain"): "test_cli_modes::test_users_commands_in_plain",
}  # fmt: skip
"""(command, mode) → the test that runs it."""


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """``(command, modes)`` of every leaf command of ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*prefix, name))
            return
    offered = {o for a in parser._actions for o in a.option_strings if o in MODES}
    yield " ".join(prefix), ("plain", *sorted(offered))


def test_every_command_and_mode_is_run():
    wanted = {(command, mode) for command, modes in commands(build_parser()) for mode in modes}
    assert wanted == set(RUN_BY), wanted ^ set(RUN_BY)
    for where in set(RUN_BY.values()):
        module, name = where.split("::")
        assert callable(getattr(importlib.import_module(module), name, None)), where


def read_plain(capsys) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.out


def test_library_commands_in_plain_and_json(tmp_path, capsys):
    population = make_planted_population(
        np.random.default_rng(0), group_sizes=(3, 3), rows_per_task=20, n_features=3
    )
    data = tmp_path / "data.csv"
    population.frame.to_csv(data, index=False)
    columns = ["--task", "task", "--label", "label"]
    model = tmp_path / "m.cnb"
    assert main(["fit", str(data), *columns, "--kind", "cnb-bhc", "-o", str(model)]) == 0
    assert "saved to" in read_plain(capsys)
    assert main(["fit", str(data), *columns, "--kind", "ns", "-o", str(model), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    predicted = tmp_path / "p.csv"
    assert main(["predict", str(model), str(data), "--task", "task", "-o", str(predicted)]) == 0
    assert str(predicted) in read_plain(capsys)
    assert (
        main(["predict", str(model), str(data), "--task", "task", "-o", str(predicted), "--json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)
    assert main(["evidence", str(data), *columns]) == 0
    assert "log" in read_plain(capsys).lower()
    assert main(["evidence", str(data), *columns, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    out = tmp_path / "curves"
    args = ["evaluate", str(data), *columns, "--protocol", "transfer", "--kind", "ns,cs",
            "--k", "2", "--repeats", "1", "--targets", "2", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    assert "auc" in read_plain(capsys).lower()
    assert main(["warm-up"]) == 0
    read_plain(capsys)


def test_meeting_commands_in_plain_and_json(tmp_path, capsys):
    from clusterednb.examples import meeting as toy

    assert main(["meeting", "simulate", "-o", str(tmp_path / "world")]) == 0
    assert "simulated" in read_plain(capsys)
    folder, _ = toy.world()
    toy.organisation().write(folder)
    model = folder / "model.cnb"
    args = ["meeting", "fit", "--requests", str(folder / "requests.csv"), "--store",
            str(folder / "answers.db"), "-o", str(model), "--kind", "cnb-bhc"]  # fmt: skip
    assert main(args) == 0
    assert "saved to" in read_plain(capsys)
    decide = ["meeting", "decide", str(folder / "pending" / "user00" / "request-0.ics"),
              "--user", "user00", "--calendar", str(folder / "calendars" / "user00.ics"),
              "--directory", str(folder / "directory.json"), "--model", str(model)]  # fmt: skip
    assert main(decide) == 0
    assert "reply written to" in read_plain(capsys)
    assert main([*decide, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["decision"] in ("accept", "decline")
    learn = ["meeting", "learn", str(folder / "pending" / "user01" / "request-2.ics"),
             "--user", "user01", "--calendar", str(folder / "calendars" / "user01.ics"),
             "--directory", str(folder / "directory.json"), "--accepted", "yes",
             "--store", str(folder / "answers.db")]  # fmt: skip
    assert main(learn) == 0
    assert "recorded user01's answer" in read_plain(capsys)


def test_a_meeting_that_has_begun_is_refused_by_decide_as_by_the_service(
    tmp_path, capsys, monkeypatch
):
    from clusterednb.examples import meeting as toy

    folder, _ = toy.world()
    toy.fitted_model().save(folder / "model.cnb")
    decide = ["meeting", "decide", str(folder / "pending" / "user00" / "request-0.ics"),
              "--user", "user00", "--calendar", str(folder / "calendars" / "user00.ics"),
              "--directory", str(folder / "directory.json"), "--model",
              str(folder / "model.cnb")]  # fmt: skip
    for now, state in (("2026-12-31T00:00:00+00:00", "ended"), (None, "is under way")):
        if now is None:  # the moment the meeting starts
            import icalendar

            request = icalendar.Calendar.from_ical(
                (folder / "pending" / "user00" / "request-0.ics").read_bytes()
            )
            start = next(iter(request.walk("VEVENT"))).decoded("DTSTART")
            now = start.isoformat()
        monkeypatch.setenv("CNB_NOW", now)
        assert main(decide) == 1
        err = capsys.readouterr().err
        assert f"and {state}" in err and "never answered" in err


def test_sync_in_plain_dry_run_and_json(radicale, setting, tmp_path, capsys):
    upload(radicale, {"ny": INVITATIONS["ny"], "berlin": INVITATIONS["berlin"]})
    args = [*sync_args(radicale, setting, tmp_path), "--directory",
            str(setting / "directory.json"), "--ask-band", "0"]  # fmt: skip
    assert main([*args, "--dry-run"]) == 0
    assert read_plain(capsys).count("would answer") == 2
    assert main(args) == 0
    out = read_plain(capsys)
    assert out.count("answered on the server") == 2 and "Budget review" in out
    assert main(args) == 0
    assert read_plain(capsys).strip() == "no invitation waits for an answer"
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_users_commands_in_plain(tmp_path, capsys):
    store = str(tmp_path / "service.db")
    assert main(["users", "add", "ann", "--email", "ann@example.org", "--store", store]) == 0
    assert "ann" in read_plain(capsys)
    assert main(["users", "list", "--store", store]) == 0
    assert "ann@example.org" in read_plain(capsys)
    secret = tmp_path / "imap"
    secret.write_text("s3cret\n")
    secret.chmod(0o600)
    mailbox = ["users", "mailbox", "ann", "--store", store, "--imap", "127.0.0.1:9",
               "--username", "ann", "--password-file", str(secret)]  # fmt: skip
    assert main(mailbox) == 2  # the login is tried first: nothing listens there
    err = capsys.readouterr().err
    assert "cannot use the IMAP server 127.0.0.1:9" in err and "s3cret" not in err
    assert main([*mailbox, "--no-check"]) == 0
    assert "registered ann's mailbox" in read_plain(capsys)
    assert main(["users", "revoke", "ann", "--store", store]) == 0
    assert "ann" in read_plain(capsys)


@pytest.mark.parametrize("password, status", [("wrong", 2), ("secret", 0)])
def test_registering_a_calendar_tries_the_login(radicale, tmp_path, capsys, password, status):
    store = str(tmp_path / "service.db")
    assert main(["users", "add", "ann", "--email", "ann@example.org", "--store", store]) == 0
    secret = tmp_path / "password"
    secret.write_text(password + "\n")
    secret.chmod(0o600)
    command = ["users", "calendar", "ann", "--store", store, "--caldav", radicale,
               "--username", "ann", "--password-file", str(secret)]  # fmt: skip
    capsys.readouterr()
    assert main(command) == status
    captured = capsys.readouterr()
    if status:
        assert "the login was refused" in captured.err and password not in captured.err
    else:
        assert "registered ann's calendar" in captured.out
