"""What one pass (:mod:`~clusterednb.service.passes.calendar_pass`, and the mailbox's) is
given and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterednb.exceptions import check_choice
from clusterednb.meeting.deciding import ASK_BAND
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import calendar_address
from clusterednb.meeting.invitation_decision import Invitee
from clusterednb.meeting.rules import ON_ASK

PARTSTATS = {"accept": "ACCEPTED", "decline": "DECLINED"}
"""The attendee's PARTSTAT for each decision."""
LOCK_WAIT = 120.0
"""Seconds a pass waits for another pass of the same person over the same store to end."""


class ServerUnavailable(MeetingError):
    """The CalDAV server cannot be reached or refused the login (exit status 2).

    Examples
    --------
    >>> ServerUnavailable("cannot use the CalDAV server").exit_status
    2
    """

    exit_status = 2


@dataclass(frozen=True)
class CaldavLogin:
    """A CalDAV account: the server, the login and the authorities to trust.

    Examples
    --------
    >>> CaldavLogin("http://127.0.0.1:5232/ann/", "ann", "secret")  # the password never shown
    CaldavLogin(url='http://127.0.0.1:5232/ann/', username='ann', ca_bundle=None)
    """

    url: str
    username: str
    password: str = field(repr=False)
    ca_bundle: Path | None = None


@dataclass(frozen=True)
class PassSettings:
    """What every pass over a person's account needs, whichever the account's kind
    (:class:`SyncSettings` for a CalDAV calendar,
    :class:`~clusterednb.service.passes.mail.mail_pass.MailSettings` for a mailbox).

    Examples
    --------
    >>> from pathlib import Path
    >>> settings = PassSettings(None, "ann@example.org", model=None, state=Path("ann.db"))
    >>> settings.costs, settings.dry_run  # a wrong accept and a wrong decline cost the same
    ((1.0, 1.0), False)
    >>> PassSettings(None, "ann@example.org", None, Path("a.db"), on_ask="x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: on_ask ... got 'x'
    """

    account: Any
    email: str
    model: Any
    state: Path
    directory: Directory | None = None
    smtp: tuple[str, int] | None = None
    sender: str | None = None
    ask_band: float = ASK_BAND
    costs: tuple[float, float] = (1.0, 1.0)
    on_ask: str | None = None
    comment: str | None = None
    user: str | None = None
    dry_run: bool = False
    lock_wait: float = LOCK_WAIT
    keep_activity_days: float = 365.0

    def __post_init__(self) -> None:
        if self.on_ask is not None:
            check_choice("on_ask", self.on_ask, ON_ASK, MeetingError)


@dataclass(frozen=True)
class SyncSettings(PassSettings):
    """What one CalDAV pass needs (the ``cnb meeting sync`` options).

    Examples
    --------
    >>> from pathlib import Path
    >>> login = CaldavLogin("http://127.0.0.1:5232/ann/", "ann", "secret")
    >>> SyncSettings(login, "ann@example.org", model=None, state=Path("ann.db")).account.url
    'http://127.0.0.1:5232/ann/'
    """

    account: CaldavLogin


@dataclass
class PassResult:
    """What the pass did with one invitation (the decision itself is a
    :class:`~clusterednb.meeting.deciding.Decision`).

    Examples
    --------
    >>> outcome = PassResult("/ann/m1.ics", "m1", "", 0, "Planning", "accept", 0.91, "written")
    >>> outcome.reasons
    []
    """

    href: str
    uid: str
    recurrence_id: str
    sequence: int
    summary: str
    decision: str
    p_accept: float | None
    action: str
    reasons: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def proposed(cls, base: dict[str, Any], decided: Any) -> PassResult:
        """What a pass would do with a fresh decision (a
        :class:`~clusterednb.meeting.deciding.Decision`), before it does it.

        Examples
        --------
        >>> from clusterednb.meeting.deciding import Decision
        >>> base = {"href": "", "uid": "m1", "recurrence_id": "", "sequence": 0, "summary": "x"}
        >>> PassResult.proposed(base, Decision("ask")).action
        'would ask'
        """
        return cls(
            **base,
            decision=decided.decision,
            p_accept=decided.p_accept,
            action="would ask" if decided.decision == "ask" else "would answer",
            reasons=[reason.to_dict() for reason in decided.reasons],
        )

    def line(self) -> str:
        """One line for a person.

        Examples
        --------
        >>> PassResult("/ann/m1.ics", "m1", "", 0, "Planning", "accept", 0.91, "written").line()
        'accept  P(accept) 0.910  written                          Planning'
        """
        p = "  —  " if self.p_accept is None else f"{self.p_accept:.3f}"
        instance = f" [{self.recurrence_id}]" if self.recurrence_id else ""
        return f"{self.decision:7} P(accept) {p}  {self.action:32} {self.summary}{instance}"


def invitee_of(settings: PassSettings, store: Any, user: str, entry: Any, rules: Any) -> Invitee:
    """The person a pass decides for (``settings``: a :class:`PassSettings`),
    with their answers so far counted in ``store``.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> from clusterednb.meeting.rules import PersonRules
    >>> store, _ = toy.service_store()
    >>> settings = SyncSettings(CaldavLogin("http://dav/", "ann", "pw"), "mailto:ann@example.org",
    ...                         None, Path("ann.db"), costs=(1.0, 5.0))
    >>> invitee_of(settings, store, "ann", None, PersonRules()).email
    'ann@example.org'
    """
    return Invitee(
        user=user,
        email=calendar_address(settings.email),
        entry=entry,
        rules=rules,
        costs=settings.costs,
        n_answers=store.answers_of(user),
        jobs=settings.directory.jobs if settings.directory else {},
    )
