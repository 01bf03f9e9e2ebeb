"""How a stored request is shown: the API's record and the review page's row (local time,
the probability as the command line prints it, the reasons in words)."""

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from clusterednb.meeting.explain import format_probability
from clusterednb.meeting.rules import now


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
    words = []
    for reason in record["reasons"][:3]:
        direction = "for accepting" if reason["log_odds"] > 0 else "for declining"
        if reason["log_odds"] == 0 and reason.get("words"):  # a rule's reason: no direction
            words.append(reason["words"])
            continue
        if reason.get("words"):
            words.append(f"{reason['words']} ({direction})")
            continue
        parts = [p for p in reason["value"].split(" / ") if p not in ("other", "None")]
        value = ", ".join(dict.fromkeys(parts)) or reason["value"]
        words.append(f"{reason['feature'].replace('_', ' ')}: {value} ({direction})")
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
