"""A person's mailbox over IMAP: connecting over TLS, the messages that carry calendar parts,
and the keywords that mark what the assistant did with them.

TLS only: IMAPS (port 993, or any port but 143) or STARTTLS (port 143, or ``starttls``); a
server whose certificate comes from a private authority is trusted with a CA bundle. The login
is LOGIN with a password, or SASL ``XOAUTH2`` with a bearer token (Microsoft 365 and Gmail
accept only OAuth for IMAP). Any failure to connect or log in is one line naming the server
and the cause (:class:`MailboxUnavailable`, exit status 2).

Keywords (IMAP flags the client may set on a message, RFC 3501 §2.3.2): :data:`ANSWERED` on a
message the assistant has dealt with (answered, refused, expired, cancelled: the message is
marked read too), :data:`ASKED` on one it asks the person about (left unread). Messages with
:data:`ANSWERED` are not read again.
"""

from __future__ import annotations

import imaplib
import re
import ssl
from dataclasses import dataclass
from pathlib import Path

from clusterednb.meeting.errors import MeetingError

ANSWERED = "$CNBAnswered"
ASKED = "$CNBAsked"
TIMEOUT = 30.0


class MailboxUnavailable(MeetingError):
    """The IMAP server cannot be reached or refused the login (exit status 2).

    Examples
    --------
    >>> MailboxUnavailable("cannot use the IMAP server").exit_status
    2
    """

    exit_status = 2


@dataclass(frozen=True)
class ImapAccount:
    """Where and how to log in; the password or token is never printed.

    Examples
    --------
    >>> account = ImapAccount("imap.example.org", 993, "ann", password="s3cret")
    >>> "s3cret" in repr(account), account.uses_starttls
    (False, False)
    """

    host: str
    port: int
    username: str
    password: str | None = None
    token: str | None = None
    folder: str = "INBOX"
    ca_bundle: Path | None = None
    starttls: bool | None = None

    def __repr__(self) -> str:
        return f"ImapAccount({self.host}:{self.port}, {self.username!r}, folder={self.folder!r})"

    @property
    def uses_starttls(self) -> bool:
        """STARTTLS on a plain connection (port 143 by default), else TLS from the start."""
        return self.port == 143 if self.starttls is None else self.starttls


def imap_address(text: str) -> tuple[str, int]:
    """``HOST[:PORT]`` (port 993 by default).

    Examples
    --------
    >>> imap_address("imap.example.org"), imap_address("127.0.0.1:10143")
    (('imap.example.org', 993), ('127.0.0.1', 10143))
    >>> imap_address("imap.example.org:x")
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: --imap takes HOST[:PORT], got 'imap.example.org:x'
    """
    host, colon, port = text.rpartition(":")
    if not colon:
        return text, 993
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise MeetingError(f"--imap takes HOST[:PORT], got {text!r}")
    return host, int(port)


def cause_of(error: BaseException) -> str:
    """One readable cause of a connection or login failure.

    Examples
    --------
    >>> cause_of(ConnectionRefusedError(111, "Connection refused"))
    'connection refused'
    >>> import imaplib
    >>> cause_of(imaplib.IMAP4.abort("socket error: EOF"))
    'socket error: EOF'
    """
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"the server's certificate cannot be verified ({error.verify_message})"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({getattr(error, 'reason', None) or error})"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, TimeoutError):
        return "no answer (timed out)"
    text = error.args[0] if error.args else str(error)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text) or type(error).__name__


def _tls_hint(account: ImapAccount, error: BaseException) -> str:
    """What to try when the two ends disagree on how TLS starts (implicit TLS spoken to a
    STARTTLS port gets a plain-text greeting; STARTTLS spoken to an implicit-TLS port gets
    no greeting it understands).

    Examples
    --------
    >>> import ssl
    >>> account = ImapAccount("127.0.0.1", 1143, "ann", password="x")
    >>> _tls_hint(account, ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"))
    ' (the server did not start TLS: on a STARTTLS port try --starttls)'
    """
    if isinstance(error, ConnectionRefusedError):
        return ""
    said = str(getattr(error, "reason", "") or error).upper()
    plain_reply = any(mark in said for mark in ("WRONG_VERSION", "RECORD_LAYER", "HTTP_REQUEST"))
    if not account.uses_starttls and isinstance(error, ssl.SSLError) and plain_reply:
        return " (the server did not start TLS: on a STARTTLS port try --starttls)"
    if account.uses_starttls and isinstance(error, OSError | imaplib.IMAP4.error):
        return (
            " (no plain IMAP greeting: on a port with TLS from the start, such as 993, try "
            "without --starttls)"
        )
    return ""


def _fresh_capabilities(connection: imaplib.IMAP4) -> None:
    """Read the capabilities again after login: some servers (pymap, Gmail) announce IDLE and
    others only once the client is authenticated, and imaplib keeps the first list."""
    try:
        status, data = connection.capability()
    except (OSError, imaplib.IMAP4.error):
        return
    if status == "OK" and data and data[-1]:
        connection.capabilities = tuple(data[-1].decode("ascii", "replace").upper().split())


def connect(account: ImapAccount) -> imaplib.IMAP4:
    """A logged-in connection; :class:`MailboxUnavailable` in one line on any failure.

    Examples
    --------
    >>> connect(ImapAccount("127.0.0.1", 9, "ann", password="x"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.service.passes.mail.imap.MailboxUnavailable: cannot use the IMAP server
    127.0.0.1:9: ...
    """
    if account.ca_bundle is not None and not Path(account.ca_bundle).is_file():
        raise MailboxUnavailable(f"--ca-bundle {account.ca_bundle}: no such file")
    context = ssl.create_default_context(
        cafile=str(account.ca_bundle) if account.ca_bundle else None
    )
    where = f"{account.host}:{account.port}"
    try:
        if account.uses_starttls:
            connection = imaplib.IMAP4(account.host, account.port, timeout=TIMEOUT)
            connection.starttls(ssl_context=context)
        else:
            connection = imaplib.IMAP4_SSL(
                account.host, account.port, ssl_context=context, timeout=TIMEOUT
            )
    except (OSError, imaplib.IMAP4.error) as error:
        raise MailboxUnavailable(
            f"cannot use the IMAP server {where}: {cause_of(error)}{_tls_hint(account, error)}"
        ) from None
    try:
        if account.token is not None:
            sasl = f"user={account.username}\x01auth=Bearer {account.token}\x01\x01".encode()
            connection.authenticate("XOAUTH2", lambda _: sasl)
        else:
            connection.login(account.username, account.password or "")
    except (OSError, imaplib.IMAP4.error) as error:
        connection.shutdown()
        raise MailboxUnavailable(
            f"the IMAP server {where} refused the login of {account.username}: {cause_of(error)}"
        ) from None
    _fresh_capabilities(connection)
    return connection


def check_login(account: ImapAccount) -> None:
    """Log in and open the account's folder, then log out: :class:`MailboxUnavailable` (or
    a missing folder) in one line if that fails."""
    connection = connect(account)
    try:
        open_folder(connection, account.folder, readonly=True)
    finally:
        try:
            connection.logout()
        except (OSError, imaplib.IMAP4.error):
            pass


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def open_folder(connection: imaplib.IMAP4, folder: str, readonly: bool) -> int:
    """Select ``folder`` (read-only: EXAMINE, which changes no flag); a missing one is named.
    Returns the folder's UIDVALIDITY (0 when the server does not say it): a message is known
    by it and its UID."""
    status, data = connection.select(_quoted(folder), readonly=readonly)
    if status != "OK":
        said = data[0].decode("utf-8", "replace") if data and data[0] else status
        raise MeetingError(f"cannot open the folder {folder!r}: {said}")
    _, validity = connection.response("UIDVALIDITY")
    try:
        return int(validity[0]) if validity and validity[0] else 0
    except ValueError:
        return 0


_CALENDAR = re.compile(rb'"text"\s+"calendar"|"application"\s+"ics"', re.IGNORECASE)


def calendar_messages(
    connection: imaplib.IMAP4, skip: set[int] | frozenset[int] = frozenset()
) -> list[tuple[bytes, bytes]]:
    """``(uid, raw message)`` of every message of the open folder that carries a
    ``text/calendar`` or ``application/ics`` part (its BODYSTRUCTURE says so), has no
    :data:`ANSWERED` keyword and whose UID is not in ``skip`` (dealt with before: on a server
    that keeps no keywords the store remembers them), oldest first; read with ``BODY.PEEK``
    (no message is marked read by reading it)."""
    status, data = connection.uid("SEARCH", None, "UNDELETED", "UNKEYWORD", ANSWERED)
    if status != "OK" or not data or not data[0]:
        return []
    uids = [uid for uid in data[0].split() if int(uid) not in skip]
    if not uids:
        return []
    found = []
    for start in range(0, len(uids), 200):
        batch = b",".join(uids[start : start + 200])
        status, structures = connection.uid("FETCH", batch, "(BODYSTRUCTURE)")
        for item in structures or ():
            line = item[0] if isinstance(item, tuple) else item
            if not line or not _CALENDAR.search(line if isinstance(line, bytes) else b""):
                continue
            uid = re.search(rb"UID (\d+)", line)
            if uid:
                found.append(uid[1])
    messages = []
    for uid in found:
        status, data = connection.uid("FETCH", uid, "(BODY.PEEK[])")
        body = next((part[1] for part in data or () if isinstance(part, tuple)), None)
        if status == "OK" and body is not None:
            messages.append((uid, body))
    return messages


def mark(connection: imaplib.IMAP4, uid: bytes, asked: bool) -> None:
    """Mark a message: :data:`ASKED` and unread, or :data:`ANSWERED` and read."""
    if asked:
        connection.uid("STORE", uid, "+FLAGS", f"({ASKED})")
        connection.uid("STORE", uid, "-FLAGS", "(\\Seen)")
    else:
        connection.uid("STORE", uid, "+FLAGS", f"({ANSWERED} \\Seen)")
