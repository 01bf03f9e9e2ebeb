"""The ``cnb serve`` and ``cnb users add | list | revoke | calendar | mailbox`` commands'
options (argparse only)."""

from __future__ import annotations

import argparse
from pathlib import Path

COMMANDS = "clusterednb.cli.service_commands"
STORE_HELP = "the service's SQLite store (as given to cnb serve --store)"


def add_service_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``cnb serve`` and ``cnb users ...``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="cnb")
    >>> add_service_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["users", "add", "ann", "--email", "ann@example.org", "--store",
    ...                           "service.db"])
    >>> args.run, args.cost_false_decline
    ('clusterednb.cli.service_commands:add_user', 1.0)
    """
    _add_serve(commands)
    users = commands.add_parser("users", help="accounts of the service")
    sub = users.add_subparsers(dest="users_command", required=True)
    for add in (_add_user, _add_list_and_revoke, _add_calendar, _add_mailbox):
        add(sub)


def _add_serve(commands: argparse._SubParsersAction) -> None:
    """``cnb serve``: the web service and its scheduled passes."""
    serve = commands.add_parser("serve", help="run the meeting assistant as a web service")
    serve.add_argument("--store", type=Path, required=True, help="SQLite store (created if absent)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    serve.add_argument("--directory", type=Path, help="the organisation's directory.json")
    serve.add_argument("--model", type=Path, help="the organisation's model file (the base)")
    serve.add_argument(
        "--ask-band", type=float, default=0.2, help="ask if losses are closer (%(default)s)"
    )
    serve.add_argument(
        "--sync-every",
        type=float,
        default=15.0,
        metavar="MINUTES",
        help="minutes between rounds of the registered calendars' passes (cnb users calendar; "
        "default 15; 0: none)",
    )
    serve.add_argument("--smtp", metavar="HOST:PORT", help="the passes also mail each reply")
    serve.add_argument("--from", dest="sender", metavar="EMAIL", help="the replies' sender")
    serve.add_argument(
        "--keep-activity",
        type=float,
        default=365.0,
        metavar="DAYS",
        help="days the record of what the assistant did is kept (default 365)",
    )
    _add_sign_in(serve)
    serve.set_defaults(run=f"{COMMANDS}:serve", needs=("service",))


def _add_sign_in(serve: argparse.ArgumentParser) -> None:
    """``cnb serve --oidc-...``: people sign in through the organisation's OpenID provider."""
    group = serve.add_argument_group(
        "sign-in with the organisation's OpenID Connect provider (docs/service.md)"
    )
    group.add_argument("--oidc-issuer", metavar="URL", help="the provider's issuer URL")
    group.add_argument("--oidc-client-id", metavar="ID", help="this service's client id there")
    group.add_argument(
        "--oidc-client-secret-file",
        type=Path,
        metavar="FILE",
        help="a file (mode 600) holding the client's secret",
    )
    group.add_argument(
        "--oidc-admin-group",
        metavar="NAME",
        help="people in this group (the ID token's groups claim) administer the service",
    )


def _add_user(sub: argparse._SubParsersAction) -> None:
    """``cnb users add``: an account and its API token."""
    add = sub.add_parser("add", help="create an account and print its API token (once)")
    add.add_argument("user", help="user id (as in the directory)")
    add.add_argument("--email", required=True, help="the address invitations are sent to")
    add.add_argument("--store", type=Path, required=True, help=STORE_HELP)
    add.add_argument(
        "--directory",
        type=Path,
        help="the organisation's directory.json: warn if the user is not in it",
    )
    add.add_argument(
        "--cost-false-accept",
        type=float,
        default=1.0,
        help="cost of accepting an invitation the user would decline (default 1)",
    )
    add.add_argument(
        "--cost-false-decline",
        type=float,
        default=1.0,
        help="cost of declining an invitation the user would accept (default 1)",
    )
    add.add_argument(
        "--admin",
        action="store_true",
        help="the person administers the service: the /admin page, everyone's records",
    )
    add.set_defaults(run=f"{COMMANDS}:add_user")


def _add_list_and_revoke(sub: argparse._SubParsersAction) -> None:
    """``cnb users list`` and ``cnb users revoke``."""
    listing = sub.add_parser("list", help="list the accounts (never their tokens)")
    listing.add_argument("--store", type=Path, required=True, help=STORE_HELP)
    listing.set_defaults(run=f"{COMMANDS}:list_users")
    revoke = sub.add_parser("revoke", help="revoke an account's token")
    revoke.add_argument("user", help="the user id whose token stops working")
    revoke.add_argument("--store", type=Path, required=True, help=STORE_HELP)
    revoke.set_defaults(run=f"{COMMANDS}:revoke_user")


def _add_calendar(sub: argparse._SubParsersAction) -> None:
    """``cnb users calendar``: a person's CalDAV account."""
    calendar = sub.add_parser(
        "calendar",
        help="register a person's CalDAV account: cnb serve then answers there on its schedule",
    )
    calendar.add_argument("user", help="the user id (cnb users add)")
    calendar.add_argument("--store", type=Path, required=True, help=STORE_HELP)
    calendar.add_argument("--caldav", metavar="URL", help="the CalDAV server")
    calendar.add_argument("--username", help="the CalDAV account's user name")
    calendar.add_argument(
        "--password-file",
        type=Path,
        help="a file holding the password (its first line); or set CNB_CALDAV_PASSWORD, or "
        "leave both out on a terminal to be asked; kept in the store, readable by you only",
    )
    calendar.add_argument("--ca-bundle", type=Path, help="PEM of the authorities to trust")
    calendar.add_argument("--remove", action="store_true", help="forget the account instead")
    calendar.add_argument(
        "--no-check", action="store_true", help="register without trying the login first"
    )
    calendar.set_defaults(run=f"{COMMANDS}:register_calendar")


def _add_mailbox(sub: argparse._SubParsersAction) -> None:
    """``cnb users mailbox``: a person's mailbox."""
    mailbox = sub.add_parser(
        "mailbox",
        help="register a person's mailbox (IMAP): cnb serve then reads and answers it on its "
        "schedule",
    )
    mailbox.add_argument("user", help="the user id (cnb users add)")
    mailbox.add_argument("--store", type=Path, required=True, help=STORE_HELP)
    mailbox.add_argument("--imap", metavar="HOST[:PORT]", help="the IMAP server (port 993)")
    mailbox.add_argument("--username", help="the mailbox's login name")
    mailbox.add_argument(
        "--password-file",
        type=Path,
        help="a file holding the password (its first line); or set CNB_IMAP_PASSWORD, or "
        "leave both out on a terminal to be asked",
    )
    mailbox.add_argument(
        "--oauth-token-file", type=Path, help="an OAuth 2 access token: XOAUTH2 instead"
    )
    mailbox.add_argument("--starttls", action="store_true", help="STARTTLS (port 143: always)")
    mailbox.add_argument("--folder", default="INBOX", help="the folder (default INBOX)")
    mailbox.add_argument("--ca-bundle", type=Path, help="PEM of the authorities to trust")
    mailbox.add_argument("--remove", action="store_true", help="forget the mailbox instead")
    mailbox.add_argument(
        "--no-check", action="store_true", help="register without trying the login first"
    )
    mailbox.set_defaults(run=f"{COMMANDS}:register_mailbox")
