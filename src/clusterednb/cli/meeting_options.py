"""The ``cnb meeting simulate | decide | learn | fit`` commands' options (argparse only)."""

from __future__ import annotations

import argparse
from pathlib import Path

from clusterednb.cli.options import add_calibration, add_json, add_output

ASSISTANT_KINDS = ("cnb-logistic", "cnb-bhc", "cnb-gibbs")
"""``cnb meeting fit --kind`` (the same as ``clusterednb.meeting.assistant.ASSISTANT_KINDS``,
the default first; argparse only here, so no import of the assistant)."""
COMMANDS = "clusterednb.cli.meeting_commands"


def add_meeting_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``cnb meeting ...``.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="cnb")
    >>> add_meeting_commands(parser.add_subparsers())
    >>> parser.parse_args(["meeting", "simulate", "-o", "world"]).run
    'clusterednb.cli.meeting_commands:simulate'
    """
    meeting = commands.add_parser("meeting", help="the meeting assistant")
    sub = meeting.add_subparsers(dest="meeting_command", required=True)
    for add in (_add_simulate, _add_decide, _add_learn, _add_sync, add_mail, _add_fit):
        add(sub)


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    """``cnb meeting simulate``: an organisation and its calendars."""
    simulate = sub.add_parser("simulate", help="simulate an organisation and its calendars")
    add_output(simulate, "output folder", old="--out")
    simulate.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    simulate.add_argument("--pending", type=int, default=3, help="pending requests per user")
    simulate.add_argument(
        "--format",
        choices=["csv", "parquet"],
        default="csv",
        help="file format of the requests (parquet needs the [parquet] extra)",
    )
    simulate.set_defaults(run=f"{COMMANDS}:simulate")


def _add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """The invitation, the person, their calendar and the directory."""
    parser.add_argument("request", type=Path, help="the METHOD:REQUEST .ics file")
    parser.add_argument("--user", required=True, help="user id (as in the directory)")
    parser.add_argument("--calendar", type=Path, required=True, help="the user's .ics")
    parser.add_argument("--directory", type=Path, required=True, help="directory.json")


def _add_decide(sub: argparse._SubParsersAction) -> None:
    """``cnb meeting decide``: accept, decline or ask about one invitation."""
    decide_parser = sub.add_parser("decide", help="accept or decline a request")
    _add_request_arguments(decide_parser)
    decide_parser.add_argument(
        "--model", type=Path, required=True, help="the organisation's model file (cnb meeting fit)"
    )
    add_costs(decide_parser)
    add_output(
        decide_parser,
        "reply .ics (default REQUEST-reply.ics; - for standard output)",
        required=False,
        old="--reply",
    )
    add_json(decide_parser)
    decide_parser.set_defaults(run=f"{COMMANDS}:decide_request")


def _add_learn(sub: argparse._SubParsersAction) -> None:
    """``cnb meeting learn``: record the person's real answer."""
    learn_parser = sub.add_parser("learn", help="record the user's real answer")
    _add_request_arguments(learn_parser)
    learn_parser.add_argument(
        "--accepted", choices=["yes", "no"], required=True, help="the user's answer"
    )
    learn_parser.add_argument(
        "--store",
        type=Path,
        default=Path("feedback.sqlite"),
        help="the answers' store (created if absent; default %(default)s)",
    )
    learn_parser.add_argument("--model", type=Path, help="also update this model file")
    learn_parser.set_defaults(run=f"{COMMANDS}:learn_answer")


def _add_sync(sub: argparse._SubParsersAction) -> None:
    """``cnb meeting sync``: a pass over a CalDAV calendar."""
    sync = sub.add_parser(
        "sync", help="decide the invitations waiting in a CalDAV calendar, answer them there"
    )
    sync.add_argument("--caldav", required=True, metavar="URL", help="the CalDAV server")
    sync.add_argument("--username", required=True, help="the CalDAV account's user name")
    sync.add_argument(
        "--password-file",
        type=Path,
        help="a file holding the CalDAV account's password (its first line); or set "
        "CNB_CALDAV_PASSWORD, or leave both out on a terminal to be asked",
    )
    sync.add_argument(
        "--password",
        help="the password itself: visible in the process list and the shell history; "
        "prefer --password-file (kept for old scripts)",
    )
    sync.add_argument(
        "--ca-bundle",
        type=Path,
        help="PEM file of the certificate authorities to trust (a private CA, a self-signed "
        "server)",
    )
    sync.add_argument("--user", required=True, metavar="EMAIL", help="the attendee to act for")
    sync.add_argument("--model", type=Path, required=True, help="the organisation's model file")
    sync.add_argument("--directory", type=Path, help="directory.json")
    sync.add_argument("--smtp", metavar="HOST:PORT", help="also mail the organiser an iMIP REPLY")
    sync.add_argument("--from", dest="sender", metavar="EMAIL", help="the mail's sender")
    sync.add_argument(
        "--state",
        type=Path,
        default=Path("sync-state.db"),
        help="what was answered (a service store; default sync-state.db)",
    )
    sync.add_argument("--ask-band", type=float, default=0.2, help="0 never asks")
    add_costs(sync)
    sync.add_argument(
        "--on-ask",
        choices=["none", "tentative"],
        help="what an ask does on the calendar: leave the invitation waiting (none) or answer "
        "TENTATIVE until the person decides; default: the person's setting in the state "
        "store (cnb serve's page or PUT /api/settings), else none",
    )
    sync.add_argument(
        "--comment",
        help="one sentence added to every reply (RFC 5546 COMMENT); default: the person's "
        "setting in the state store, else none",
    )
    sync.add_argument("--dry-run", action="store_true", help="decide, but change nothing")
    add_json(sync)
    sync.set_defaults(run=f"{COMMANDS}:sync_calendars", needs=("caldav",))


def _add_fit(sub: argparse._SubParsersAction) -> None:
    """``cnb meeting fit``: train the assistant's model."""
    fit = sub.add_parser(
        "fit", help="train the assistant's model from the store (and a requests CSV)"
    )
    fit.add_argument(
        "--store",
        type=Path,
        default=Path("feedback.sqlite"),
        help="the answers' store to train on (default %(default)s)",
    )
    fit.add_argument("--requests", type=Path, help="requests.csv to train on as well")
    fit.add_argument(
        "--model",
        "-o",
        "--output",
        dest="model",
        type=Path,
        required=True,
        help="output model file",
    )
    fit.add_argument(
        "--kind",
        choices=ASSISTANT_KINDS,
        default=ASSISTANT_KINDS[0],
        help="the assistant's model: the clustered logistic regression (the default: it wins "
        "protocol T on the simulated organisation, BENCHMARKS.md) or Clustered NB by BHC or Gibbs",
    )
    fit.add_argument(
        "--inference",
        choices=["bhc", "gibbs"],
        help="Clustered NB by this engine (the same as --kind cnb-bhc or cnb-gibbs)",
    )
    add_calibration(
        fit,
        "sigmoid",
        "learn a map of the model's log-odds on answers it did not see, so that "
        "decisions at each person's costs use honest probabilities",
    )
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.set_defaults(run=f"{COMMANDS}:fit")


def add_costs(parser: argparse.ArgumentParser) -> None:
    """The person's two costs (the ``--cost-false-positive/negative`` spellings too).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_costs(parser)
    >>> parser.parse_args(["--cost-false-negative", "4"]).cost_false_decline
    4.0
    """
    parser.add_argument(
        "--cost-false-accept",
        "--cost-false-positive",
        dest="cost_false_accept",
        type=float,
        default=1.0,
        help="cost of accepting a request the user would decline (default 1)",
    )
    parser.add_argument(
        "--cost-false-decline",
        "--cost-false-negative",
        dest="cost_false_decline",
        type=float,
        default=1.0,
        help="cost of declining a request the user would accept (default 1)",
    )


def add_mail(sub: argparse._SubParsersAction) -> None:
    """``cnb meeting mail``: a pass over a mailbox (docs/mail.md).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="cnb")
    >>> add_mail(parser.add_subparsers())
    >>> args = parser.parse_args(["mail", "--imap", "imap.example.org", "--username", "ann",
    ...                           "--user", "ann@example.org", "--model", "m.cnb"])
    >>> args.folder, args.state.name, args.every
    ('INBOX', 'mail-state.db', 60.0)
    """
    mail = sub.add_parser(
        "mail", help="decide the invitations in a mailbox (IMAP), answer them by mail"
    )
    mail.add_argument("--imap", required=True, metavar="HOST[:PORT]", help="the IMAP server")
    mail.add_argument("--username", required=True, help="the mailbox's login name")
    mail.add_argument(
        "--password-file",
        type=Path,
        help="a file holding the password (its first line); or set CNB_IMAP_PASSWORD, or leave "
        "both out on a terminal to be asked",
    )
    mail.add_argument(
        "--oauth-token-file",
        type=Path,
        help="a file holding an OAuth 2 access token: SASL XOAUTH2 instead of a password "
        "(Microsoft 365, Gmail)",
    )
    mail.add_argument(
        "--starttls", action="store_true", help="STARTTLS (the default on port 143 only)"
    )
    mail.add_argument("--ca-bundle", type=Path, help="PEM of the authorities to trust")
    mail.add_argument("--folder", default="INBOX", help="the folder to read (default INBOX)")
    mail.add_argument("--user", required=True, metavar="EMAIL", help="the attendee to act for")
    mail.add_argument("--model", type=Path, required=True, help="the organisation's model file")
    mail.add_argument("--directory", type=Path, help="directory.json")
    mail.add_argument(
        "--calendar",
        metavar="FILE|URL",
        help="the person's calendar (.ics) for busy time and conflicts; default: their CalDAV "
        "account (--caldav), else the invitations accepted so far",
    )
    mail.add_argument("--caldav", metavar="URL", help="the person's CalDAV account, for conflicts")
    mail.add_argument("--caldav-username", help="its user name (default: --username)")
    mail.add_argument(
        "--caldav-password-file",
        type=Path,
        help="its password (first line); or CNB_CALDAV_PASSWORD, or a prompt",
    )
    mail.add_argument("--smtp", metavar="HOST:PORT", help="the SMTP server the replies go out by")
    mail.add_argument("--from", dest="sender", metavar="EMAIL", help="the replies' sender")
    mail.add_argument(
        "--state",
        type=Path,
        default=Path("mail-state.db"),
        help="what was answered (a service store; default mail-state.db)",
    )
    mail.add_argument("--ask-band", type=float, default=0.2, help="0 never asks")
    add_costs(mail)
    mail.add_argument("--on-ask", choices=["none", "tentative"], help="as cnb meeting sync")
    mail.add_argument("--comment", help="one sentence added to every reply (COMMENT)")
    mail.add_argument("--dry-run", action="store_true", help="decide, but change nothing")
    mail.add_argument(
        "--watch",
        action="store_true",
        help="keep going: wait for new mail with IMAP IDLE (or every --every seconds)",
    )
    mail.add_argument("--every", type=float, default=60.0, help="seconds between watch passes")
    mail.add_argument("--passes", type=int, help="with --watch: stop after this many passes")
    add_json(mail)
    mail.set_defaults(run="clusterednb.cli.mail_commands:read_mailbox")
