"""How a stored request is shown: the API's record and the review page's row (local time,
the probability as the command line prints it, the reasons in words)."""

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from clusterednb.meeting.explain import format_probability
from clusterednb.meeting.rules import now
from clusterednb.service.activity_tables import reasons_in_words


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    """A stored request as the API shows it."""
    loss = None
    if record["loss_accept"] is not None:
        loss = {"accept": record["loss_accept"], "decline": record["loss_decline"]}
    return {
        "id": record["id"],
        "uid": record["uid"],
        "recurrence_id": record["recurrence_id"] or None,
        "sequence": record["sequence"],
        "summary": record["summary"],
        "organizer": record["organizer"],
        "starts_at": record["starts_at"],
        "received_at": record["received_at"],
        "decision": record["decision"],
        "p_accept": record["p_accept"],
        "expected_loss": loss,
        "reasons": record["reasons"],
        "missing": record["missing"],
        "answer": record["answer"],
    } | ({"warnings": record["notes"]} if record.get("notes") else {})


def page_row(record: dict[str, Any], zone: ZoneInfo) -> dict[str, Any]:
    """A request as the review page shows it: local time, a probability bar, reasons."""
    start = dt.datetime.fromisoformat(record["starts_at"])
    local = start.astimezone(zone) if start.tzinfo else start
    p = record["p_accept"]
    words = reasons_in_words(record["reasons"])
    return {
        "id": record["id"],
        "summary": record["summary"],
        "organizer": record["organizer"],
        "when": local.strftime("%a %d %b %Y, %H:%M") + (f" ({zone.key})" if start.tzinfo else ""),
        "decision": _shown_decision(record),
        "answer": record["answer"],
        "warnings": record.get("notes") or [],
        "percent": None if p is None else round(100 * p, 1),  # the bar's width only
        "probability": None if p is None else format_probability(p),  # as the CLI prints it
        "reasons": words,
        "missing": record["missing"],
        "last_error": record.get("last_error"),
    }


def has_started(record: dict[str, Any]) -> bool:
    """Whether a stored request's meeting has begun (a floating time read as UTC)."""
    start = dt.datetime.fromisoformat(record["starts_at"])
    return (start if start.tzinfo else start.replace(tzinfo=dt.UTC)) <= now()


def _shown_decision(record: dict[str, Any]) -> str:
    """An unanswered question whose meeting has begun is shown as expired."""
    if record["decision"] == "ask" and record["answer"] is None and has_started(record):
        return "expired"
    return record["decision"]


def activity_row(entry: dict[str, Any], zone: ZoneInfo) -> dict[str, Any]:
    """An entry of the record as the review page shows it: local time, the probability as
    the command line prints it.

    Examples
    --------
    >>> entry = {"at": "2026-11-26T09:30:00+00:00", "action": "decided", "summary": "Planning",
    ...          "organizer": "boss@example.org", "decision": "accept", "decided_by": "model",
    ...          "p_accept": 0.91, "reason": "organizer relation: manager (for accepting)"}
    >>> row = activity_row(entry, ZoneInfo("Europe/Berlin"))
    >>> row["when"], row["probability"]
    ('Thu 26 Nov 2026, 10:30', '0.910')
    """
    at = dt.datetime.fromisoformat(entry["at"]).astimezone(zone)
    p = entry["p_accept"]
    return {
        "when": at.strftime("%a %d %b %Y, %H:%M"),
        "action": entry["action"],
        "summary": entry["summary"],
        "organizer": entry["organizer"],
        "decision": entry["decision"],
        "decided_by": entry["decided_by"],
        "probability": None if p is None else format_probability(p),
        "reason": entry["reason"],
    }
