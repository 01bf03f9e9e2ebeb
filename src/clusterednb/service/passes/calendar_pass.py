"""One pass of the assistant over a user's calendars on a CalDAV server.

For every ``VEVENT`` (and every overridden instance of a recurring one) where the user is an
``ATTENDEE`` with ``PARTSTAT=NEEDS-ACTION``: compute the features from it and the rest of the
same calendars, decide or ask under the user's loss, and for a decision set the attendee's
``PARTSTAT`` on the server (nothing else of the event changes; the write carries the ETag it
read, and a concurrent change is re-read, never overwritten) and, with an SMTP server, mail the
organiser an iMIP REPLY. What was answered is remembered in the state file (a service store,
so ``cnb serve`` can share it); a second pass sends nothing again, and an invitation the
organiser updated (a higher ``SEQUENCE``) is decided afresh. When the person later answers an
"ask" in their own client, the next pass records that answer as feedback.

Never answered: cancelled events, events the user organises, events the user is not invited
to, and meetings that have ended (recorded as "expired"). The person's rules in the state store
(:mod:`clusterednb.meeting.rules`: working hours, out of office, what an ask does, a comment;
set with ``cnb serve``'s page or API) apply before the model; ``--on-ask`` and ``--comment``
override theirs. An object on the server that cannot be read is skipped with a warning naming
its href.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import icalendar

from clusterednb.exceptions import warn_at_caller
from clusterednb.meeting.directory import UserEntry
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.meeting.invitation import (
    read_calendar,
)
from clusterednb.service.passes.caldav_server import connection_problem
from clusterednb.service.passes.calendar_event import CalendarPass
from clusterednb.service.passes.outbox import say_delivery, send_owed
from clusterednb.service.passes.pass_state import person_pass, state_store, user_key
from clusterednb.service.passes.settings import (
    CaldavLogin,
    PassResult,
    ServerUnavailable,
    SyncSettings,
)


@dataclass
class _Object:
    href: str
    calendar: icalendar.Calendar


def _connect(login: CaldavLogin) -> tuple[Any, list[Any]]:
    """The CalDAV client logged in, and its calendars (else :class:`ServerUnavailable`)."""
    import caldav

    options: dict[str, Any] = {}
    if login.ca_bundle is not None:
        if not Path(login.ca_bundle).is_file():
            raise ServerUnavailable(f"--ca-bundle {login.ca_bundle}: no such file")
        options["ssl_verify_cert"] = str(login.ca_bundle)
    try:
        client = caldav.DAVClient(
            url=login.url, username=login.username, password=login.password, **options
        )
        calendars = client.principal().calendars()
    except Exception as error:  # connection refused, DNS, TLS, 401/403: one clear line
        raise ServerUnavailable(
            f"cannot use the CalDAV server {login.url}: {connection_problem(error)}"
        ) from error
    return client, calendars


def _objects(calendars: list[Any]) -> list[_Object]:
    found = []
    for calendar in calendars:
        try:
            events = calendar.events()
        except Exception as error:  # one unreadable collection must not stop the pass
            warn_at_caller(f"calendar {calendar.url} skipped: {error}", MeetingWarning)
            continue
        for event in events:
            href = str(event.url)
            try:
                data = event.data
                found.append(
                    _Object(href, read_calendar(data.encode() if isinstance(data, str) else data))
                )
            except (MeetingError, ValueError) as error:
                warn_at_caller(f"{href} skipped: {error}", MeetingWarning)
    return found


def _everything(objects: list[_Object]) -> icalendar.Calendar:
    """All events of all calendars in one calendar (for busy time and conflicts)."""
    combined = icalendar.Calendar()
    combined.add("PRODID", "-//clusterednb//sync//EN")
    combined.add("VERSION", "2.0")
    seen_zones = set()
    for item in objects:
        for component in item.calendar.subcomponents:
            if component.name == "VTIMEZONE":
                if str(component.get("TZID")) in seen_zones:
                    continue
                seen_zones.add(str(component.get("TZID")))
            if component.name in ("VTIMEZONE", "VEVENT"):
                combined.add_component(component)
    return combined


def check_caldav_login(
    url: str, username: str, password: str, ca_bundle: Path | None = None
) -> None:
    """Log in to the CalDAV account and find its calendars: :class:`ServerUnavailable` in one
    line (a refused login, a wrong address, TLS) if that fails.

    Examples
    --------
    >>> check_caldav_login("http://127.0.0.1:9/dav/", "ann", "secret")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.service.passes.settings.ServerUnavailable: cannot use the CalDAV server ...
    """
    _connect(CaldavLogin(url, username, password, ca_bundle))


def caldav_calendar(
    url: str, username: str, password: str, ca_bundle: Path | None = None
) -> icalendar.Calendar:
    """Every event of every calendar of a CalDAV account, as one calendar (the person's busy
    time and conflicts, for a pass that reads invitations elsewhere: the mailbox's)."""
    _, calendars = _connect(CaldavLogin(url, username, password, ca_bundle))
    return _everything(_objects(calendars))


def sync(settings: SyncSettings) -> list[PassResult]:
    """One pass (see the module's docstring); returns what it did with each invitation.

    Examples
    --------
    A server that cannot be reached is one clear error (exit status 2 on the command line):

    >>> from clusterednb.examples import models as toy
    >>> login = CaldavLogin("http://127.0.0.1:9/dav/", "ann", "secret")
    >>> settings = SyncSettings(login, "ann@example.org", model=None,
    ...                         state=toy.scratch_file("ann.db"))
    >>> sync(settings)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.service.passes.settings.ServerUnavailable: cannot use the CalDAV server http://127.0.0.1:9/...
    """
    user, entry = user_key(settings)
    with person_pass(settings, user):
        client, calendars = _connect(settings.account)  # before the store: nothing made if it fails
        objects = _objects(calendars)
        return _pass(settings, user, entry, client, objects)


def _pass(
    settings: SyncSettings,
    user: str,
    entry: UserEntry | None,
    client: Any,
    objects: list[_Object],
) -> list[PassResult]:
    """The pass over the server's ``objects``, under the person's lock."""
    with state_store(settings) as store:
        everything = _everything(objects)
        rules = store.rules(user, entry.timezone if entry else "UTC")
        rules = replace(
            rules, on_ask=settings.on_ask or rules.on_ask, comment=settings.comment or rules.comment
        )
        scheduling = _schedules(client)
        if scheduling and settings.smtp is not None:
            warn_at_caller(
                f"{settings.account.url} schedules (RFC 6638 calendar-auto-schedule): the server "
                "mails the organiser each reply, so --smtp is not used for replies",
                MeetingWarning,
            )
        calendar_pass = CalendarPass(
            settings, store, client, everything, user, entry, rules, scheduling
        )
        outcomes = []
        for item in objects:
            for event in item.calendar.walk("VEVENT"):
                outcome = calendar_pass.event(item.href, item.calendar, event)
                if outcome is not None:
                    outcomes.append(outcome)
        if settings.smtp is not None and not settings.dry_run:
            say_delivery(
                send_owed(store, user, settings.smtp), calendar_pass.mailed, " and by mail"
            )
    return outcomes


def _schedules(client: Any) -> bool:
    """Whether the server schedules (RFC 6638): it then sends the REPLYs itself."""
    try:
        return bool(client.supports_scheduling())
    except Exception:  # an OPTIONS the server refuses: it does not say it schedules
        return False
