"""What ``cnb meeting mail`` does (imported only when it runs): one pass over a mailbox, or
``--watch``: pass, wait for new mail (IMAP IDLE when the server offers it, else ``--every``
seconds), pass again."""

from __future__ import annotations

import argparse
import time
import urllib.request
from pathlib import Path

from clusterednb.cli.options import read_password, smtp_address
from clusterednb.cli.output import emit_json, say
from clusterednb.loading import load
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import read_calendar
from clusterednb.service.passes.mail.imap import ImapAccount, connect, imap_address, open_folder
from clusterednb.service.passes.mail.mail_pass import MailSettings, mail_pass

PASSWORD_VARIABLE = "CNB_IMAP_PASSWORD"


def mail_account(args: argparse.Namespace) -> ImapAccount:
    """The IMAP account of the options: a token from ``--oauth-token-file``, else a password
    from ``--password-file``, ``CNB_IMAP_PASSWORD`` or a prompt.

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> token = toy.scratch_file("token")
    >>> _ = token.write_text("ya29.token\\n")
    >>> token.chmod(0o600)
    >>> args = argparse.Namespace(imap="imap.gmail.com", username="ann@gmail.com",
    ...     oauth_token_file=token, password_file=None, folder="INBOX", ca_bundle=None,
    ...     starttls=False)
    >>> account = mail_account(args)
    >>> account.port, account.token, account.password
    (993, 'ya29.token', None)
    """
    host, port = imap_address(args.imap)
    token = password = None
    if args.oauth_token_file is not None:
        token = read_password(args.oauth_token_file, "CNB_IMAP_TOKEN", "")
    else:
        password = read_password(
            args.password_file, PASSWORD_VARIABLE, f"password of {args.username} at {host}: "
        )
    return ImapAccount(
        host,
        port,
        args.username,
        password=password,
        token=token,
        folder=args.folder,
        ca_bundle=args.ca_bundle,
        starttls=True if args.starttls else None,
    )


def person_calendar(args: argparse.Namespace):
    """The person's calendar for conflicts: ``--calendar`` (a file or an http(s) URL), else
    their CalDAV account (``--caldav``), else None (the invitations accepted so far)."""
    source = args.calendar
    if not source and getattr(args, "caldav", None):
        from clusterednb.service.passes.calendar_pass import caldav_calendar

        username = args.caldav_username or args.username
        password = read_password(
            args.caldav_password_file,
            "CNB_CALDAV_PASSWORD",
            f"password of {username} at {args.caldav}: ",
        )
        return caldav_calendar(args.caldav, username, password, args.ca_bundle)
    if not source:
        return None
    if source.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(source, timeout=30) as response:
                return read_calendar(response.read())
        except OSError as error:
            raise MeetingError(f"--calendar {source}: {error}") from error
    return read_calendar(Path(source))


def read_mailbox(args: argparse.Namespace) -> None:
    """``cnb meeting mail`` (see docs/mail.md).

    Examples
    --------
    A malformed ``--smtp`` is refused before anything is read:

    >>> from clusterednb.cli.parser import build_parser
    >>> read_mailbox(build_parser().parse_args([
    ...     "meeting", "mail", "--imap", "127.0.0.1:9", "--username", "ann", "--user",
    ...     "ann@example.org", "--model", "model.cnb", "--smtp", "mail.example.org"]))
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: --smtp takes HOST:PORT, got 'mail.example.org'
    """
    from clusterednb.meeting.deciding import meeting_loss

    meeting_loss(args.cost_false_accept, args.cost_false_decline)  # checks the costs
    smtp = smtp_address(args.smtp) if args.smtp else None
    if smtp is None and not args.dry_run:
        raise MeetingError("answering by mail needs --smtp HOST:PORT (or --dry-run)")
    if args.watch and not args.every > 0:
        raise MeetingError(f"--every must be a positive number of seconds, got {args.every}")
    account = mail_account(args)
    settings = MailSettings(
        account=account,
        email=args.user,
        model=load(args.model),
        state=args.state,
        directory=Directory.from_json(args.directory) if args.directory else None,
        smtp=smtp,
        sender=args.sender,
        ask_band=args.ask_band,
        costs=(args.cost_false_accept, args.cost_false_decline),
        calendar=person_calendar(args),
        on_ask=args.on_ask,
        comment=args.comment,
        dry_run=args.dry_run,
    )
    passes = 0
    while True:
        arrived = next_uid(account) if args.watch else 0
        outcomes = mail_pass(settings)
        passes += 1
        if args.json:
            emit_json([vars(outcome) | {"href": None} for outcome in outcomes])
        else:
            for outcome in outcomes:
                say(outcome.line(), args)
            if not outcomes:
                say("no invitation waiting", args)
        if not args.watch or (args.passes is not None and passes >= args.passes):
            return
        wait_for_mail(account, args.every, arrived)


def next_uid(account: ImapAccount) -> int:
    """The folder's UIDNEXT: every message that arrives later has a UID at least this (0 when
    it cannot be read)."""
    try:
        connection = connect(account)
    except MeetingError:
        return 0
    try:
        open_folder(connection, account.folder, readonly=True)
        return _uidnext(connection)
    except (OSError, MeetingError):
        return 0
    finally:
        try:
            connection.logout()
        except OSError:
            pass


def _uidnext(connection) -> int:
    _, data = connection.response("UIDNEXT")
    return int(data[0]) if data and data[0] else 0


def wait_for_mail(account: ImapAccount, seconds: float, since: int = 0) -> None:
    """Return when new mail arrives in the account's folder (IMAP IDLE, RFC 2177), at once when
    some arrived after UIDNEXT ``since`` (during the pass), or after ``seconds``; a server
    without IDLE, or any trouble while idling, waits ``seconds``."""
    started = time.monotonic()
    try:
        connection = connect(account)
    except MeetingError:
        time.sleep(seconds)
        return
    try:
        open_folder(connection, account.folder, readonly=True)
        if since and _uidnext(connection) > since:
            return
        if "IDLE" not in connection.capabilities:
            time.sleep(seconds)
            return
        tag = connection._new_tag()
        connection.send(tag + b" IDLE\r\n")
        if not connection.readline().startswith(b"+"):
            time.sleep(max(0.0, seconds - (time.monotonic() - started)))
            return
        connection.sock.settimeout(max(0.1, seconds))
        try:
            while time.monotonic() - started < seconds:
                line = connection.readline()
                if not line or b"EXISTS" in line or b"RECENT" in line:
                    break
        except TimeoutError:
            pass
        connection.sock.settimeout(None)
        connection.send(b"DONE\r\n")
        while not connection.readline().startswith(tag):
            pass
    except (OSError, MeetingError):
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))
    finally:
        try:
            connection.logout()
        except OSError:
            pass
