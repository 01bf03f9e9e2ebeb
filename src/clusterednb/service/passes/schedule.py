"""``cnb serve``'s calendar passes: every registered person's CalDAV pass and mailbox pass on a
schedule.

One process serves the API, the page and the calendars. Every ``every`` seconds a background
thread runs :func:`~clusterednb.service.passes.calendar_pass.sync` for each account registered with
``cnb users calendar`` (or on the page), with the service's current model, the person's costs
and rules, and the service's own store as the pass's state: an answer given on the page or
through the API reaches the calendar on the next pass, and an answer given in the person's own
calendar client reaches the store. A pass that fails, for whatever reason (the server is down,
the login is refused, the connection drops, a bug), is logged in one line naming the person,
the server and the cause, never the password, and the other people's passes go on; so does a
pass that leaves a reply owed or an answer unwritten (each named with its invitation). Every
pass is recorded in the store (:meth:`~clusterednb.service.store.ServiceStore.record_pass`),
which ``/healthz``, ``/metrics`` and the page read. A person whose pass another process is
running (a manual ``cnb meeting sync``) is skipped for this round. A mailbox registered with
``cnb users mailbox`` is read the same way (:mod:`~clusterednb.service.passes.mail.mail_pass`); its
replies need ``cnb serve --smtp``.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError, MeetingWarning
from clusterednb.service.passes.caldav_server import connection_problem
from clusterednb.service.passes.calendar_pass import sync
from clusterednb.service.passes.mail.mail_pass import MailSettings, mail_pass
from clusterednb.service.passes.pass_lock import PassBusy
from clusterednb.service.passes.settings import CaldavLogin, SyncSettings
from clusterednb.service.store import ServiceStore

log = logging.getLogger("clusterednb.service.calendar")
DEFAULT_EVERY = 900.0
"""Seconds between two rounds of passes (``cnb serve --sync-every``, in minutes: 15)."""
LOCK_WAIT = 5.0
"""Seconds a scheduled pass waits for another process's pass of the same person."""


class CalendarPasses:
    """A background thread running every registered person's calendar pass.

    Parameters
    ----------
    store : ServiceStore
        The service's store: the accounts, the people's costs and rules, the pass's state.
    model : callable
        Returns the serving model (or None).
    every : float
        Seconds between rounds (> 0).
    directory : Directory, optional
    smtp : (host, port), optional
        Also mail the organiser each reply.

    Examples
    --------
    With no account registered a round does nothing:

    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> CalendarPasses(store, lambda: None, 60.0).run_round()
    {}
    """

    def __init__(
        self,
        store: ServiceStore,
        model: Any,
        every: float = DEFAULT_EVERY,
        directory: Directory | None = None,
        smtp: tuple[str, int] | None = None,
        sender: str | None = None,
        ask_band: float | None = None,
    ) -> None:
        if not every > 0:
            raise MeetingError(f"the calendar passes need a positive interval, got {every}")
        self.store, self.model, self.every = store, model, every
        self.directory, self.smtp, self.sender = directory, smtp, sender
        self.ask_band = ask_band
        self.last: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="calendar-passes", daemon=True)

    def start(self) -> None:
        """Run a round now and then every ``every`` seconds, in the background."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the pass under way (waits up to 60 s)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_round()
            except Exception as error:  # the schedule never stops (the store busy, a bug)
                log.error("a round of passes failed: %s", _one_line(error))
            self._stop.wait(self.every)

    def run_round(self, only: str | None = None) -> dict[str, str]:
        """One pass for every registered account (``only``: that person's alone, as an
        administrator asks); ``{user: what happened}`` in words."""
        people = {a.user: a for a in self.store.users() if only is None or a.user == only}
        for account in self.store.calendar_accounts():
            person = people.get(account.user)
            if person is None or person.revoked:
                continue
            login = CaldavLogin(
                account.url,
                account.username,
                account.password,
                Path(account.ca_bundle) if account.ca_bundle else None,
            )
            settings = SyncSettings(account=login, **self._shared(person))
            self._one_pass("calendar", account.user, account.url, sync, settings)
        for user, mailbox in self.store.mail_accounts():
            person = people.get(user)
            if person is None or person.revoked:
                continue
            where = f"{mailbox.host}:{mailbox.port}"
            if self.smtp is None:
                said = "not read: cnb serve has no --smtp for the replies"
                self.last[f"{user} (mail)"] = said
                log.warning("mailbox of %s not read: cnb serve needs --smtp", user)
                self._record(user, "mailbox", where, "not read", said)
                continue
            settings = MailSettings(account=mailbox, **self._shared(person))
            self._one_pass("mailbox", user, where, mail_pass, settings, key=f"{user} (mail)")
        return dict(self.last)

    def _shared(self, person: Any) -> dict[str, Any]:
        """What every pass of ``person`` (an account of the store) is given."""
        return {
            "email": person.email,
            "user": person.user,
            "model": self.model(),
            "state": Path(self.store.path),
            "directory": self.directory,
            "smtp": self.smtp,
            "sender": self.sender,
            "costs": (person.cost_false_accept, person.cost_false_decline),
            "lock_wait": LOCK_WAIT,
            "keep_activity_days": self.store.keep_activity_days,
            **({} if self.ask_band is None else {"ask_band": self.ask_band}),
        }

    def _one_pass(
        self, kind: str, user: str, where: str, run: Any, settings: Any, key: str = ""
    ) -> None:
        """Run one pass; a failure of any kind is one log line naming the person, the server
        and the cause (never the secret), recorded in the store, and the other passes go on.
        Each problem the pass met (a reply owed, an event not written) is a log line too."""
        started = time.monotonic()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", MeetingWarning)
                outcomes = run(settings)
        except PassBusy as error:
            self.last[key or user] = f"skipped: {error}"
            log.info("%s pass for %s skipped: %s", kind, user, error)
            return
        except Exception as error:  # anything: this person's pass only
            said = _one_line(error)
            self.last[key or user] = f"failed: {said}"
            log.warning("%s pass for %s (%s) failed: %s", kind, user, where, said)
            self._record(user, kind, where, "failed", said)
            return
        for warning in caught:
            log.warning("%s pass for %s (%s): %s", kind, user, where, warning.message)
        self._report(kind, user, where, outcomes, started, key)

    def _record(self, user: str, kind: str, where: str, said: str, error: str | None) -> None:
        """Record the pass in the store (a store that cannot be written is logged)."""
        try:
            self.store.record_pass(user, kind, where, said, error)
        except MeetingError as failure:
            log.error("the %s pass for %s could not be recorded: %s", kind, user, failure)

    def _report(
        self, kind: str, user: str, where: str, outcomes: list, started: float, key: str = ""
    ) -> None:
        """One log line (and :attr:`last`) of what a pass did."""
        actions = Counter(outcome.action.split(":")[0] for outcome in outcomes)
        said = ", ".join(f"{n} {action}" for action, n in sorted(actions.items())) or "nothing"
        self.last[key or user] = said
        log.info(
            "%s pass for %s (%s): %s in %.1f s", kind, user, where, said, time.monotonic() - started
        )
        problems = self.store.problems(user)
        self._record(user, kind, where, said, problems[0] if problems else None)


def _one_line(error: BaseException) -> str:
    """A failure in one line: a project error as it reads, anything else by its root cause
    (a refused or dropped connection, TLS, a name), never a traceback.

    Examples
    --------
    >>> _one_line(ConnectionResetError(104, "Connection reset by peer"))
    'ConnectionResetError: [Errno 104] Connection reset by peer'
    >>> _one_line(MeetingError("the store is busy"))
    'the store is busy'
    """
    if isinstance(error, MeetingError):
        return " ".join(str(error).split())
    return connection_problem(error)
