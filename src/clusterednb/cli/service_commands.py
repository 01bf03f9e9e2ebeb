"""What ``cnb serve`` and ``cnb users ...`` do (imported only when one runs)."""

from __future__ import annotations

import argparse
import logging
from dataclasses import replace
from pathlib import Path

from clusterednb.exceptions import warn_at_caller
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.service.sign_in.provider import OidcSettings
from clusterednb.service.store import ServiceStore


def serve(args: argparse.Namespace) -> None:
    """``cnb serve``: uvicorn over the app; one log line per request; SIGTERM/SIGINT stop it.

    Examples
    --------
    Blocks until stopped, so here only what it is given: the store, the bind address and port:

    >>> from clusterednb.cli.parser import build_parser
    >>> args = build_parser().parse_args(["serve", "--store", "service.db", "--port", "8080"])
    >>> args.run, args.host, args.port
    ('clusterednb.cli.service_commands:serve', '127.0.0.1', 8080)
    """
    import uvicorn

    from clusterednb.service.app import create_app
    from clusterednb.service.settings_tables import check_private

    if args.sync_every < 0:
        raise MeetingError(
            f"--sync-every must be 0 (none) or a number of minutes, got {args.sync_every}"
        )
    if not args.keep_activity > 0:
        raise MeetingError(
            f"--keep-activity must be a positive number of days, got {args.keep_activity}"
        )
    from clusterednb.cli.options import smtp_address

    smtp = smtp_address(args.smtp) if args.smtp else None
    sign_in = _sign_in_settings(args)
    if args.sync_every > 0 and Path(args.store).exists():
        with ServiceStore(args.store) as store:
            if store.calendar_accounts() or store.mail_accounts():
                check_private(args.store)  # it holds passwords: refuse before serving
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    app = create_app(
        args.store,
        args.directory,
        args.model,
        args.ask_band,
        sync_every=60.0 * args.sync_every,
        smtp=smtp,
        sender=args.sender,
        keep_activity_days=args.keep_activity,
        sign_in=sign_in,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", access_log=True)


def _sign_in_settings(args: argparse.Namespace) -> OidcSettings | None:
    """The organisation's provider from ``--oidc-*`` (None without ``--oidc-issuer``)."""
    if args.oidc_issuer is None:
        others = (args.oidc_client_id, args.oidc_client_secret_file, args.oidc_admin_group)
        if any(value is not None for value in others):
            raise MeetingError("the --oidc-* options need --oidc-issuer URL")
        return None
    return OidcSettings.from_options(
        args.oidc_issuer, args.oidc_client_id, args.oidc_client_secret_file, args.oidc_admin_group
    )


def add_user(args: argparse.Namespace) -> None:
    """``cnb users add``: print the new account's API token.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> store = toy.scratch_file("service.db")
    >>> add_user(build_parser().parse_args(["users", "add", "ann", "--email", "ann@example.org",
    ...                                     "--store", str(store)]))  # doctest: +ELLIPSIS
    ann...
    >>> add_user(build_parser().parse_args(["users", "add", "bob", "--email", "bob@example.org",
    ...                                     "--store", str(store), "--cost-false-accept", "-1"]))
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: ...
    """
    from clusterednb.meeting.deciding import meeting_loss  # numpy and pandas: only here

    meeting_loss(args.cost_false_accept, args.cost_false_decline)  # checks the costs
    if args.directory is not None:
        from clusterednb.meeting.directory import Directory

        directory = Directory.from_json(args.directory)
        if args.user not in directory.users:
            warn_at_caller(
                f"user {args.user!r} is not in the directory {args.directory}: the service will "
                "know no relations, topics or time zone for them (UTC), so its features are "
                "weaker; add them to the directory or check the spelling",
                MeetingWarning,
            )
    with ServiceStore(args.store) as store:
        token = store.add_user(
            args.user,
            args.email,
            cost_false_accept=args.cost_false_accept,
            cost_false_decline=args.cost_false_decline,
            admin=args.admin,
        )
    print(token)


def list_users(args: argparse.Namespace) -> None:
    """``cnb users list``.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> store, _ = toy.service_store()
    >>> list_users(build_parser().parse_args(["users", "list", "--store", str(store.path)]))
    ann	ann@example.org	active	false accept 1, false decline 5
    bob	bob@example.org	active	false accept 1, false decline 1
    """
    with ServiceStore(args.store) as store:
        for account in store.users():
            state = "revoked" if account.revoked else ("admin" if account.admin else "active")
            print(
                f"{account.user}\t{account.email}\t{state}\tfalse accept "
                f"{account.cost_false_accept:g}, false decline {account.cost_false_decline:g}"
            )


def revoke_user(args: argparse.Namespace) -> None:
    """``cnb users revoke``.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> path = toy.service_store()[0].path
    >>> revoke_user(build_parser().parse_args(["users", "revoke", "bob", "--store", str(path)]))
    revoked bob
    """
    with ServiceStore(args.store) as store:
        store.revoke(args.user)
    print(f"revoked {args.user}")


def register_calendar(args: argparse.Namespace) -> None:
    """``cnb users calendar``: register (or ``--remove``) a person's CalDAV account; the
    password comes from a file, the environment or a prompt, never the command line. The
    login is tried first (a wrong password or address is refused here, not found later in
    the service's log); ``--no-check`` skips that.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> from clusterednb.examples import models as models_toy
    >>> path = toy.service_store()[0].path
    >>> secret = models_toy.scratch_file("ann-password")
    >>> _ = secret.write_text("s3cret\\n")
    >>> secret.chmod(0o600)
    >>> register_calendar(build_parser().parse_args([
    ...     "users", "calendar", "ann", "--store", str(path), "--caldav",
    ...     "http://127.0.0.1:5232/ann/", "--username", "ann", "--password-file", str(secret),
    ...     "--no-check"]))
    registered ann's calendar at http://127.0.0.1:5232/ann/ (its password is kept in the store, ...)
    >>> register_calendar(build_parser().parse_args([
    ...     "users", "calendar", "ann", "--store", str(path), "--remove"]))
    removed ann's calendar account
    """
    from clusterednb.cli.meeting_commands import caldav_password
    from clusterednb.service.settings_tables import CalendarAccount

    with ServiceStore(args.store) as store:
        if args.remove:
            found = store.remove_calendar_account(args.user)
            print(f"removed {args.user}'s calendar account" if found else f"{args.user} had none")
            return
        if not args.caldav or not args.username:
            raise MeetingError("give --caldav URL and --username NAME (or --remove)")
        bundle = _trusted_bundle(args.ca_bundle)
        args.password = None  # never from the command line here
        password = caldav_password(args)
        account = CalendarAccount(
            args.user, args.caldav, args.username, password, bundle and str(bundle)
        )
        if not args.no_check:
            from clusterednb.service.passes.calendar_pass import check_caldav_login

            check_caldav_login(args.caldav, args.username, password, bundle)
        store.set_calendar_account(account)
    print(
        f"registered {args.user}'s calendar at {args.caldav} (its password is kept in the "
        "store, readable by you only)"
    )


def register_mailbox(args: argparse.Namespace) -> None:
    """``cnb users mailbox``: register (or ``--remove``) a person's mailbox; the password or
    OAuth token comes from a file, the environment or a prompt, never the command line. The
    login is tried first; ``--no-check`` skips that.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> from clusterednb.cli.parser import build_parser
    >>> from clusterednb.examples import models as models_toy
    >>> path = toy.service_store()[0].path
    >>> secret = models_toy.scratch_file("ann-imap")
    >>> _ = secret.write_text("s3cret\\n")
    >>> secret.chmod(0o600)
    >>> register_mailbox(build_parser().parse_args([
    ...     "users", "mailbox", "ann", "--store", str(path), "--imap", "imap.example.org",
    ...     "--username", "ann", "--password-file", str(secret), "--no-check"]))
    registered ann's mailbox at imap.example.org:993 (its secret is kept in the store, ...)
    """
    from clusterednb.cli.mail_commands import mail_account

    with ServiceStore(args.store) as store:
        if args.remove:
            found = store.remove_mail_account(args.user)
            print(f"removed {args.user}'s mailbox" if found else f"{args.user} had none")
            return
        if not args.imap or not args.username:
            raise MeetingError("give --imap HOST[:PORT] and --username NAME (or --remove)")
        bundle = _trusted_bundle(args.ca_bundle)
        account = mail_account(args)
        if bundle is not None:
            account = replace(account, ca_bundle=bundle)
        if not args.no_check:
            from clusterednb.service.passes.mail.imap import check_login

            check_login(account)
        store.set_mail_account(args.user, account)
    print(
        f"registered {args.user}'s mailbox at {account.host}:{account.port} (its secret is kept "
        "in the store, readable by you only)"
    )


def _trusted_bundle(ca_bundle: Path | None) -> Path | None:
    """``--ca-bundle`` as the absolute path the store keeps (the service runs elsewhere), or
    None; a path that is no file is refused by name."""
    if ca_bundle is None:
        return None
    if not Path(ca_bundle).is_file():
        raise MeetingError(f"--ca-bundle {ca_bundle}: no such file")
    return Path(ca_bundle).resolve()
