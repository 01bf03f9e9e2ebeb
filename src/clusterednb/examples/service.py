"""A ready-made service store and request for the service's examples.

A docstring imports the fixture module that defines what it uses (:mod:`clusterednb.examples`).
"""

from __future__ import annotations

from typing import Any

from clusterednb.examples.models import scratch_file
from clusterednb.service.store import ServiceStore


def service_store() -> tuple[ServiceStore, str]:
    """A new service store in a scratch file with two accounts, ``ann`` (a wrong decline
    costs her 5) and ``bob``; returns the store and ann's API token.

    Examples
    --------
    >>> store, token = service_store()
    >>> [account.user for account in store.users()], token.startswith("ann.")
    (['ann', 'bob'], True)
    """
    store = ServiceStore(scratch_file("service.db"))
    token = store.add_user("ann", "ann@example.org", cost_false_decline=5.0)
    store.add_user("bob", "bob@example.org")
    return store, token


def request_record(uid: str = "m1@example.org") -> dict[str, Any]:
    """A decided invitation as :meth:`ServiceStore.add_request` stores it: a 10:00 meeting
    from carol, accepted with P(accept) = 0.8.

    Examples
    --------
    >>> request_record()["decision"]
    'accept'
    """
    return {
        "uid": uid,
        "recurrence_id": "",
        "sequence": 0,
        "ics": b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n",
        "summary": "Planning",
        "organizer": "carol@example.org",
        "starts_at": "2026-11-24T10:00:00+00:00",
        "features": {"hour": "10"},
        "missing": [],
        "decision": "accept",
        "p_accept": 0.8,
        "loss_accept": 0.2,
        "loss_decline": 4.0,
        "reasons": [],
    }


def outgoing_reply(partstat: str = "ACCEPTED") -> Any:
    """A REPLY to :func:`request_record`'s invitation, ready for the outbox.

    Examples
    --------
    >>> outgoing_reply().recipient
    'carol@example.org'
    """
    from clusterednb.meeting.reply import reply_message
    from clusterednb.service.delivery_tables import OutgoingReply

    message = reply_message(
        b"BEGIN:VCALENDAR\r\nMETHOD:REPLY\r\nEND:VCALENDAR\r\n",
        "ann@example.org",
        "carol@example.org",
        "Planning",
        partstat,
    )
    return OutgoingReply.of(message, partstat)
