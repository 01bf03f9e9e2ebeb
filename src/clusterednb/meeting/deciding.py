"""Decide or ask: the Bayes decision under the user's costs, or a question when it is close.

:func:`decide_or_ask` is the one decision of the assistant, and :class:`Decision` its one result:
``cnb meeting decide``, the service and the calendar pass all call it.

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

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.decision import LossMatrix, bayes_decision, expected_loss
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.explain import Reason, feature_log_odds, format_probability, reasons
from clusterednb.meeting.features import FEATURE_NAMES, LABELS
from clusterednb.meeting.invitation import calendar_address, recurrence_key, sequence_number

ASK_BAND = 0.2
MIN_ANSWERS = 5
UNCERTAIN = 0.3


@dataclass(frozen=True)
class Decision:
    """The assistant's answer to one request, wherever it was asked (the command line, the
    service, a calendar pass).

    Attributes
    ----------
    decision : {"accept", "decline", "ask", "expired"}
        "ask" only by the rules of :func:`decide_or_ask` or of the person
        (:func:`~clusterednb.meeting.rules.decide_by_rules`); "expired": the meeting has ended
        and is never answered.
    p_accept : float or None
        Posterior probability that the user would accept; None without a model.
    threshold : float or None
        Accept when ``p_accept`` exceeds it: ``A / (A + B)`` for a false-accept cost ``A``
        and a false-decline cost ``B``.
    expected_loss : dict of str to float, or None
        Posterior expected loss of ``"accept"`` and of ``"decline"`` under the user's costs.
    reasons : tuple of Reason
        The per-feature log-odds with dependent features grouped, strongest first.
    log_odds : Series or None
        Per-feature log-odds of accepting, largest magnitude first.
    features : dict of str to str or None
        The request's features.
    reply : bytes or None
        The ``METHOD:REPLY`` calendar, when the caller made one
        (:func:`~clusterednb.meeting.assistant.decide` does).

    Examples
    --------
    >>> Decision("ask").decision  # no model yet: the assistant asks
    'ask'
    >>> from clusterednb.examples import meeting as toy
    >>> folder, directory = toy.world()
    >>> from clusterednb.meeting.assistant import decide
    >>> decision = decide(toy.fitted_model(), folder / "pending/user00/request-0.ics", "user00",
    ...                   folder / "calendars/user00.ics", directory, cost_false_accept=3.0)
    >>> decision.threshold, decision.accept == (decision.p_accept > 0.75)
    (0.75, True)
    """

    decision: str
    p_accept: float | None = None
    threshold: float | None = None
    expected_loss: dict[str, float] | None = None
    reasons: tuple[Reason, ...] = ()
    log_odds: pd.Series | None = None
    features: dict[str, str | None] = field(default_factory=dict)
    reply: bytes | None = None

    @property
    def accept(self) -> bool:
        """Whether the decision is to accept."""
        return self.decision == "accept"

    def summary(self, top: int = 5) -> str:
        """A few lines for a person: the decision, its probability and the main reasons.

        Probabilities are printed with the digits they need (never "1.000" unless exactly
        1). Dependent features (a conflict, its importance and its frequency) are one reason.

        Examples
        --------
        >>> from clusterednb.examples import meeting as toy
        >>> from clusterednb.meeting.assistant import decide
        >>> folder, directory = toy.world()
        >>> decision = decide(toy.fitted_model(), folder / "pending/user02/request-1.ics",
        ...                   "user02", folder / "calendars/user02.ics", directory)
        >>> lines = decision.summary(top=2).splitlines()
        >>> lines[0].startswith("decision: "), len(lines)
        (True, 4)
        >>> Decision("ask").summary()
        'decision: ASK (no model yet)'
        """
        if self.p_accept is None:
            return f"decision: {self.decision.upper()} (no model yet)"
        head = f"decision: {self.decision.upper()} (P(accept) = {format_probability(self.p_accept)}"
        if self.threshold is not None:
            head += f"; accept above {format_probability(self.threshold)}"
        lines = [head + ")", "reasons that pushed it most (log-odds of accepting):"]
        for reason in self.reasons[:top]:
            said = reason.words or f"{reason.feature} = {reason.value}"
            lines.append(f"  {said}: {reason.log_odds:+.2f}")
        return "\n".join(lines)


def meeting_loss(cost_false_accept: float, cost_false_decline: float) -> LossMatrix:
    """Loss over (truth, action) in the order ``("decline", "accept")``.

    Raises
    ------
    MeetingError
        A cost that is negative or not finite, or both costs zero (no decision is better).

    Examples
    --------
    >>> meeting_loss(cost_false_accept=3.0, cost_false_decline=1.0).matrix.tolist()
    [[0.0, 3.0], [1.0, 0.0]]
    """
    for name, cost in (("false accept", cost_false_accept), ("false decline", cost_false_decline)):
        if not math.isfinite(cost) or cost < 0:
            raise MeetingError(f"the cost of a {name} must be a finite number >= 0, got {cost}")
    if cost_false_accept == 0 and cost_false_decline == 0:
        raise MeetingError(
            "the costs of a false accept and a false decline are both 0: every decision costs "
            "nothing, so there is nothing to decide; make at least one positive"
        )
    return LossMatrix.binary(
        cost_false_positive=cost_false_accept,
        cost_false_negative=cost_false_decline,
        pos_label="accept",
    ).for_classes(LABELS)


def _why_ask(close: bool, unsure: bool, n_answers: int, gap: float) -> tuple[Reason, ...]:
    """Why the assistant asks instead of deciding, in words (none when it decides).

    Examples
    --------
    >>> (reason,) = _why_ask(False, True, 2, 0.5)
    >>> reason.words
    'only 2 answers of yours so far (fewer than 5) and the model is unsure: it asks you'
    >>> _why_ask(False, False, 30, 0.9)
    ()
    """
    if unsure:
        words = (
            f"only {n_answers} answer{'s' if n_answers != 1 else ''} of yours so far (fewer "
            f"than {MIN_ANSWERS}) and the model is unsure: it asks you"
        )
        return (Reason("ask", "few answers", 0.0, words),)
    if close:
        words = (
            f"accepting and declining would cost you almost the same (expected costs "
            f"{gap:.2f} apart): it asks you"
        )
        return (Reason("ask", "too close", 0.0, words),)
    return ()


def decide_or_ask(
    model: Any,
    features: dict[str, str | None],
    user: str,
    costs: tuple[float, float],
    n_answers: int,
    ask_band: float = ASK_BAND,
) -> Decision:
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
    >>> from clusterednb.examples import meeting as toy
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
        why = Reason("ask", "no model", 0.0, "the assistant has no model yet: it asks you")
        return Decision("ask", reasons=(why,), features=dict(features))
    if list(model.classes_) != list(LABELS):
        found = [str(c) for c in model.classes_]
        raise MeetingError(f"the model's classes are {found}, expected {list(LABELS)}")
    row = pd.DataFrame([features], columns=list(FEATURE_NAMES))
    proba = model.predict_proba(row, np.array([user], dtype=object))
    loss = meeting_loss(*costs)
    losses = expected_loss(proba, loss)[0]
    p_accept = float(proba[0, list(model.classes_).index("accept")])
    chosen = LABELS[int(bayes_decision(proba, loss)[0])]
    close = abs(losses[0] - losses[1]) < ask_band
    unsure = ask_band > 0 and n_answers < MIN_ANSWERS and abs(p_accept - 0.5) < UNCERTAIN
    log_odds = feature_log_odds(model, row, user, "accept")
    why_ask = _why_ask(close, unsure, n_answers, float(abs(losses[0] - losses[1])))
    return Decision(
        "ask" if close or unsure else chosen,
        p_accept,
        costs[0] / (costs[0] + costs[1]),
        {LABELS[0]: float(losses[0]), LABELS[1]: float(losses[1])},
        (*why_ask, *reasons(log_odds, features)),
        log_odds,
        dict(features),
    )


def request_record(
    event: Any,
    data: bytes,
    features: dict[str, str | None],
    missing: list[str],
    decision: Decision,
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
    >>> from clusterednb.examples import meeting as toy
    >>> request, calendar, directory = toy.pending()
    >>> from clusterednb.meeting.invitation import request_event
    >>> record = request_record(request_event(request), request.to_ical(), {"duration": "60"},
    ...                         ["conflict"], Decision("ask"))
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
        "decision": decision.decision,
        "p_accept": decision.p_accept,
        "loss_accept": decision.expected_loss["accept"] if decision.expected_loss else None,
        "loss_decline": decision.expected_loss["decline"] if decision.expected_loss else None,
        "reasons": [reason.to_dict() for reason in decision.reasons],
    }
