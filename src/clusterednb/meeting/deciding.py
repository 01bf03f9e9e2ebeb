"""Decide or ask: the Bayes decision under the user's costs, or a question when it is close.

A request is answered only when the decision is clear:

- "ask" when the posterior expected losses of accepting and declining differ by less than the
  ask band (default :data:`ASK_BAND`, in the units of the user's costs; with costs 1 and 1 it
  asks while P(accept) is within 0.4–0.6);
- "ask" while the user has given fewer than :data:`MIN_ANSWERS` answers and the organisation's
  model is uncertain (P(accept) within :data:`UNCERTAIN` of one half, i.e. 0.2–0.8);
- "ask" when there is no model yet (a new store), never an error.

An ask band of 0 never asks when there is a model (neither rule applies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.decision import bayes_decision, expected_loss
from clusterednb.meeting.assistant import meeting_loss
from clusterednb.meeting.explain import feature_log_odds, reasons
from clusterednb.meeting.features import FEATURE_NAMES, LABELS
from clusterednb.meeting.invitation import calendar_address, recurrence_key, sequence_number

ASK_BAND = 0.2
MIN_ANSWERS = 5
UNCERTAIN = 0.3


@dataclass(frozen=True)
class Outcome:
    """The service's answer to one request.

    Attributes
    ----------
    decision : {"accept", "decline", "ask"}
    p_accept : float or None
        None without a model.
    loss : dict of str to float, or None
        Posterior expected loss of ``"accept"`` and ``"decline"``.
    reasons : list of dict
        ``{"feature", "value", "log_odds"}``, strongest first.

    Examples
    --------
    >>> Outcome("ask", None, None, []).decision  # no model yet: the service asks
    'ask'
    """

    decision: str
    p_accept: float | None = None
    loss: dict[str, float] | None = None
    reasons: list[dict[str, Any]] = field(default_factory=list)


def decide_or_ask(
    model: Any,
    features: dict[str, str | None],
    user: str,
    costs: tuple[float, float],
    n_answers: int,
    ask_band: float = ASK_BAND,
) -> Outcome:
    """Decide one request for ``user`` (see the module's rules).

    Parameters
    ----------
    model : fitted estimator with classes ("decline", "accept"), or None
    features : dict
        Feature name → value (None: missing).
    user : str
    costs : (float, float)
        The costs of a false accept and of a false decline.
    n_answers : int
        How many requests the user has answered.
    ask_band : float, default=ASK_BAND
        0 never asks (with a model).

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> request, calendar, directory = toy.pending()
    >>> from clusterednb.meeting.calendar import extract_features
    >>> features = extract_features(request, calendar, directory, "user00")
    >>> outcome = decide_or_ask(toy.fitted_model(), features, "user00", (1.0, 1.0), n_answers=30)
    >>> outcome.decision, round(outcome.p_accept, 3)  # expected losses 0.484, 0.516: too close
    ('ask', 0.516)
    >>> decide_or_ask(toy.fitted_model(), features, "user00", (1.0, 1.0), 30, ask_band=0.0).decision
    'accept'
    """
    if model is None:
        return Outcome("ask")
    row = pd.DataFrame([features], columns=list(FEATURE_NAMES))
    proba = model.predict_proba(row, np.array([user], dtype=object))
    loss = meeting_loss(*costs)
    losses = expected_loss(proba, loss)[0]
    p_accept = float(proba[0, list(model.classes_).index("accept")])
    chosen = LABELS[int(bayes_decision(proba, loss)[0])]
    close = abs(losses[0] - losses[1]) < ask_band
    unsure = ask_band > 0 and n_answers < MIN_ANSWERS and abs(p_accept - 0.5) < UNCERTAIN
    log_odds = feature_log_odds(model, row, user, "accept")
    return Outcome(
        "ask" if close or unsure else chosen,
        p_accept,
        {LABELS[0]: float(losses[0]), LABELS[1]: float(losses[1])},
        [reason.to_dict() for reason in reasons(log_odds, features)],
    )


def request_record(
    event: Any,
    data: bytes,
    features: dict[str, str | None],
    missing: list[str],
    outcome: Outcome,
) -> dict[str, Any]:
    """What a store keeps of one decided invitation (a ``VEVENT`` and its bytes).

    Returns
    -------
    dict
        ``uid``, ``recurrence_id``, ``sequence``, ``ics``, ``summary``, ``organizer``,
        ``starts_at``, ``features``, ``missing``, ``decision``, ``p_accept``,
        ``loss_accept``, ``loss_decline``, ``reasons``.

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> request, calendar, directory = toy.pending()
    >>> from clusterednb.meeting.invitation import request_event
    >>> record = request_record(request_event(request), request.to_ical(), {"duration": "60"},
    ...                         ["conflict"], Outcome("ask", None, None, []))
    >>> record["uid"], record["decision"], record["sequence"]
    ('user00-pending-0@org.example', 'ask', 0)
    """
    return {
        "uid": str(event["UID"]),
        "recurrence_id": recurrence_key(event),
        "sequence": sequence_number(event),
        "ics": data,
        "summary": str(event.get("SUMMARY", "(no title)")),
        "organizer": calendar_address(event["ORGANIZER"]),
        "starts_at": event.decoded("DTSTART").isoformat(),
        "features": features,
        "missing": missing,
        "decision": outcome.decision,
        "p_accept": outcome.p_accept,
        "loss_accept": outcome.loss["accept"] if outcome.loss else None,
        "loss_decline": outcome.loss["decline"] if outcome.loss else None,
        "reasons": outcome.reasons,
    }
