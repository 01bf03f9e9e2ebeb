"""One decision of an invitation for every pass (CalDAV and mailbox): its features in the
person's calendar, then the person's rules, then the model under their costs."""

from __future__ import annotations

import warnings
from typing import Any

import icalendar

from clusterednb.meeting.calendar import features_in_context
from clusterednb.meeting.deciding import Decision, decide_or_ask
from clusterednb.meeting.directory import UserEntry
from clusterednb.meeting.errors import MeetingWarning
from clusterednb.meeting.invitation import calendar_address
from clusterednb.meeting.rules import PersonRules, decide_by_rules


def decide_invitation(
    settings: Any,
    store: Any,
    user: str,
    entry: UserEntry | None,
    rules: PersonRules,
    single: icalendar.Calendar,
    event: icalendar.Event,
    everything: icalendar.Calendar | None,
) -> tuple[Decision, dict[str, str | None], list[str]]:
    """Decide one invitation (``single``, its ``event``) as every pass does: its features in
    the person's calendar ``everything``, then the person's rules, then the model under their
    costs (``settings``: a :class:`SyncSettings` or a mailbox's). Returns the decision, the
    features and the missing ones; :class:`MeetingError` when the features cannot be read."""
    jobs = settings.directory.jobs if settings.directory else {}
    email = calendar_address(settings.email)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeetingWarning)
        features, missing = features_in_context(single, email, everything, entry, jobs)
    decided = decide_by_rules(event, rules, features) or decide_or_ask(
        settings.model, features, user, settings.costs, store.answers_of(user), settings.ask_band
    )
    return decided, features, missing


def single_event(calendar: icalendar.Calendar, event: icalendar.Event) -> icalendar.Calendar:
    """One invitation (one VEVENT of ``calendar``, with its time zones), as a request to
    decide."""
    single = icalendar.Calendar()
    single.add("PRODID", "-//clusterednb//sync//EN")
    single.add("VERSION", "2.0")
    for component in calendar.walk("VTIMEZONE"):
        single.add_component(component)
    single.add_component(event)
    return single
