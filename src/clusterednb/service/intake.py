"""Receiving one invitation: check it, compute its features, decide or ask, store it once."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import icalendar

from clusterednb.meeting.deciding import ASK_BAND, request_record
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.invitation import (
    find_attendee,
    read_calendar,
    recurrence_key,
    request_event,
    sequence_number,
)
from clusterednb.meeting.invitation_decision import Invitee, decide_invitation
from clusterednb.service.accounts import Account
from clusterednb.service.store import ServiceStore


def receive_cancellation(
    store: ServiceStore, who: Account, calendar: icalendar.Calendar
) -> dict[str, Any]:
    """An organiser's ``METHOD:CANCEL``: close ``who``'s pending questions about it.

    Every ``VEVENT`` of the cancellation names a meeting by ``UID`` (and one instance by
    ``RECURRENCE-ID``); the unanswered invitations of ``who`` to it leave the store (and the
    review page). A cancellation that does not list ``who`` among its attendees is refused.

    Examples
    --------
    >>> from clusterednb.examples import service as toy
    >>> store, _ = toy.service_store()
    >>> who = store.authenticate(store.add_user("cy", "cy@example.org"))
    >>> _ = store.add_request("cy", toy.request_record("m1@example.org"))
    >>> cancel = icalendar.Calendar.from_ical(
    ...     "BEGIN:VCALENDAR\\r\\nVERSION:2.0\\r\\nPRODID:-//x//EN\\r\\nMETHOD:CANCEL\\r\\n"
    ...     "BEGIN:VEVENT\\r\\nUID:m1@example.org\\r\\nDTSTAMP:20261201T090000Z\\r\\n"
    ...     "ORGANIZER:mailto:carol@example.org\\r\\nATTENDEE:mailto:cy@example.org\\r\\n"
    ...     "STATUS:CANCELLED\\r\\nEND:VEVENT\\r\\nEND:VCALENDAR\\r\\n")
    >>> receive_cancellation(store, who, cancel)
    {'status': 'cancelled', 'uid': 'm1@example.org', 'closed': 1}
    """
    events = list(calendar.walk("VEVENT"))
    if not events or any("UID" not in event for event in events):
        raise MeetingError("a cancellation must hold VEVENTs with a UID")
    uids = {str(event["UID"]) for event in events}
    if len(uids) != 1:
        raise MeetingError(f"a cancellation must name one meeting, found UIDs {sorted(uids)}")
    if not any(find_attendee(event, who.email) for event in events):
        raise MeetingError(f"{who.email} is not among the attendees of the cancellation")
    closed = 0
    for event in events:
        instance = recurrence_key(event) if "RECURRENCE-ID" in event else None
        closed += store.cancel(who.user, str(event["UID"]), instance)
    return {"status": "cancelled", "uid": uids.pop(), "closed": closed}


@lru_cache(maxsize=16)  # a few users at a time; calendars are at most 16 MiB each
def _parsed_calendar(data: bytes) -> icalendar.Calendar:
    """A user's stored calendar, parsed once per version (it is only read)."""
    return read_calendar(data)


def receive_invitation(
    store: ServiceStore,
    model: Any,
    directory: Directory | None,
    who: Account,
    calendar: icalendar.Calendar,
    data: bytes,
    ask_band: float = ASK_BAND,
) -> tuple[dict[str, Any], bool, list[str]]:
    """Decide and store an invitation to ``who`` (the same UID and SEQUENCE only once): by the
    person's rules first (:func:`~clusterednb.meeting.rules.decide_by_rules`: a meeting that
    has ended is stored as "expired", never answered), else by the model.

    Parameters
    ----------
    store : ServiceStore
    model : fitted estimator or None
        The organisation's model.
    directory : Directory or None
    who : Account
        The user invited (must be an attendee).
    calendar : icalendar.Calendar
        The parsed invitation.
    data : bytes
        Its bytes (stored for the reply).
    ask_band : float

    Returns
    -------
    record : dict
        The stored request.
    created : bool
        False when it was stored before.
    notes : list of str
        Warnings met on the way (a skipped calendar event, an unknown time zone).

    Examples
    --------
    >>> from clusterednb.examples import service as data_toy
    >>> from clusterednb.examples import meeting as toy
    >>> from clusterednb.meeting.invitation import read_calendar
    >>> folder, directory = toy.world()
    >>> store, _ = data_toy.service_store()
    >>> who = store.authenticate(store.add_user("user00", directory.users["user00"].email))
    >>> data = (folder / "pending" / "user00" / "request-0.ics").read_bytes()
    >>> record, created, notes = receive_invitation(store, toy.fitted_model(), directory, who,
    ...                                             read_calendar(data), data)
    >>> record["decision"] in ("accept", "decline", "ask"), created  # "ask": too close to call
    (True, True)
    >>> receive_invitation(store, toy.fitted_model(), directory, who, read_calendar(data),
    ...                    data)[1]  # the same invitation again: stored once
    False
    """
    event = request_event(calendar, who.email)
    key = (str(event["UID"]), recurrence_key(event), sequence_number(event))
    found = store.find_request(who.user, *key)
    if found is not None:
        return found, False, []
    own = store.calendar(who.user)
    entry = directory.users.get(who.user) if directory else None
    invitee = Invitee(
        user=who.user,
        email=who.email,
        entry=entry,
        rules=store.rules(who.user, entry.timezone if entry else "UTC"),
        costs=(who.cost_false_accept, who.cost_false_decline),
        n_answers=store.answers_of(who.user),
        jobs=directory.jobs if directory else {},
    )
    found = decide_invitation(
        calendar, invitee, _parsed_calendar(own) if own else None, model, ask_band
    )
    notes = found.notes
    record = request_record(event, data, found.features, found.missing, found.decision)
    record |= {"notes": notes}
    stored, created = store.add_request(who.user, record)
    return stored, created, notes
