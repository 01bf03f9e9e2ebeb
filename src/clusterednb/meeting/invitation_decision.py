"""One decision of an invitation, for every path that decides one: the HTTP intake, the CalDAV
and mailbox passes, and ``cnb meeting decide``. Its features in the person's calendar, then
the person's rules (a meeting that has ended is "expired", never answered; working hours, out
of office), then the model under the person's costs, asking inside the ask band."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import icalendar

from clusterednb.meeting.calendar import features_in_context
from clusterednb.meeting.deciding import ASK_BAND, Decision, decide_or_ask
from clusterednb.meeting.directory import UserEntry
from clusterednb.meeting.invitation import request_event
from clusterednb.meeting.rules import PersonRules, decide_by_rules


@dataclass(frozen=True)
class Invitee:
    """Who is invited and what decides for them.

    Attributes
    ----------
    user : str
        The person's key (in the model and the store).
    email : str
        Their calendar address.
    entry : UserEntry or None
        Their directory entry (time zone, relations, topics, site).
    rules : PersonRules
    costs : (float, float)
        A wrong accept's and a wrong decline's cost.
    n_answers : int
        How many invitations they have answered (few: the assistant asks when unsure).
    jobs : dict
        The directory's people: address → job.
    """

    user: str
    email: str
    entry: UserEntry | None = None
    rules: PersonRules = field(default_factory=PersonRules)
    costs: tuple[float, float] = (1.0, 1.0)
    n_answers: int = 0
    jobs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DecidedInvitation:
    """A decision with what it was made from: the features (None where missing), the names
    of the missing ones, and the warnings met on the way (an unknown time zone, a calendar
    event skipped)."""

    decision: Decision
    features: dict[str, str | None]
    missing: list[str]
    notes: list[str]


def decide_invitation(
    invitation: icalendar.Calendar,
    invitee: Invitee,
    calendar: icalendar.Calendar | None,
    model: Any,
    ask_band: float = ASK_BAND,
) -> DecidedInvitation:
    """Decide ``invitation`` (one VEVENT inviting ``invitee``) against their ``calendar``.

    Raises :class:`~clusterednb.meeting.errors.MeetingError` when the invitation is not one
    (no attendee of that address, no start time).

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> request, calendar, directory = toy.pending()
    >>> invitee = Invitee("user00", directory.user("user00").email, directory.user("user00"))
    >>> decided = decide_invitation(request, invitee, calendar, toy.fitted_model())
    >>> decided.decision.decision in ("accept", "decline", "ask"), len(decided.features)
    (True, 15)
    >>> from clusterednb.meeting.rules import clock_at
    >>> with clock_at("2027-01-01T00:00:00+00:00"):  # the meeting has ended: never answered
    ...     decide_invitation(request, invitee, calendar, toy.fitted_model()).decision.decision
    'expired'
    """
    event = request_event(invitation, invitee.email)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        features, missing = features_in_context(
            invitation, invitee.email, calendar, invitee.entry, invitee.jobs
        )
    decision = decide_by_rules(event, invitee.rules, features) or decide_or_ask(
        model, features, invitee.user, invitee.costs, invitee.n_answers, ask_band
    )
    notes = [str(warning.message) for warning in caught]
    return DecidedInvitation(decision, features, missing, notes)


def single_event(calendar: icalendar.Calendar, event: icalendar.Event) -> icalendar.Calendar:
    """One invitation (one VEVENT of ``calendar``, with its time zones), as a request to
    decide.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> request, _, _ = toy.pending()
    >>> single = single_event(request, request.walk("VEVENT")[0])
    >>> [c.name for c in single.subcomponents][-1]
    'VEVENT'
    """
    single = icalendar.Calendar()
    single.add("PRODID", "-//clusterednb//sync//EN")
    single.add("VERSION", "2.0")
    for component in calendar.walk("VTIMEZONE"):
        single.add_component(component)
    single.add_component(event)
    return single
