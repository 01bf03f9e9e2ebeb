"""The assistant: decide a request under the user's costs, learn from the user's answers."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from clusterednb.clustered import ClusteredNB
from clusterednb.decision import LossMatrix, bayes_decision, expected_loss
from clusterednb.estimator import TaskNaiveBayes
from clusterednb.loading import load
from clusterednb.meeting.calendar import extract_features
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.explain import Reason, feature_log_odds, format_probability, reasons
from clusterednb.meeting.features import FEATURE_NAMES, LABELS, meeting_schema
from clusterednb.meeting.invitation import read_calendar, request_event
from clusterednb.meeting.reply import make_reply
from clusterednb.meeting.store import FeedbackStore
from clusterednb.persistence import update_lock


@dataclass(frozen=True)
class Decision:
    """The assistant's answer to one request.

    Attributes
    ----------
    accept : bool
    probability : float
        Posterior probability that the user would accept.
    threshold : float
        Accept when ``probability`` exceeds it: ``A / (A + B)`` for a false-accept cost
        ``A`` and a false-decline cost ``B``.
    features : dict of str to str
    log_odds : Series
        Per-feature log-odds of accepting, largest magnitude first.
    reply : bytes
        The ``METHOD:REPLY`` calendar.
    reasons : list of Reason
        The log-odds with dependent features grouped (one fact, one reason).
    expected_loss : dict of str to float
        Posterior expected loss of ``"accept"`` and of ``"decline"`` under the user's costs.
    """

    accept: bool
    probability: float
    threshold: float
    features: dict[str, str]
    log_odds: pd.Series
    reply: bytes
    reasons: tuple[Reason, ...] = ()
    expected_loss: dict[str, float] | None = None

    def summary(self, top: int = 5) -> str:
        """A few lines for a person: the decision, its probability and the main reasons.

        Probabilities are printed with the digits they need (never "1.000" unless exactly
        1). Dependent features (a conflict, its importance and its frequency) are one reason.
        """
        lines = [
            f"decision: {'ACCEPT' if self.accept else 'DECLINE'} "
            f"(P(accept) = {format_probability(self.probability)}; "
            f"accept above {format_probability(self.threshold)})",
            "reasons that pushed it most (log-odds of accepting):",
        ]
        for reason in self.reasons[:top]:
            lines.append(f"  {reason.feature} = {reason.value}: {reason.log_odds:+.2f}")
        return "\n".join(lines)


def meeting_loss(cost_false_accept: float, cost_false_decline: float) -> LossMatrix:
    """Loss over (truth, action) in the order ``("decline", "accept")``.

    Raises
    ------
    MeetingError
        A cost that is negative or not finite, or both costs zero (no decision is better).
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


def decide(
    model: TaskNaiveBayes,
    request_path: str | Path,
    user: str,
    calendar_path: str | Path,
    directory: Directory,
    cost_false_accept: float = 1.0,
    cost_false_decline: float = 1.0,
    stamp: dt.datetime | None = None,
) -> Decision:
    """Decide one request for ``user`` with a fitted model (labels ``decline``/``accept``)."""
    if list(model.classes_) != list(LABELS):
        found = [str(c) for c in model.classes_]
        raise MeetingError(f"the model's classes are {found}, expected {list(LABELS)}")
    loss = meeting_loss(cost_false_accept, cost_false_decline)
    request = read_calendar(request_path)
    features = extract_features(request, read_calendar(calendar_path), directory, user)
    row = pd.DataFrame([features], columns=list(FEATURE_NAMES))
    proba = model.predict_proba(row, np.array([user], dtype=object))
    accept = bool(bayes_decision(proba, loss)[0] == 1)
    entry = directory.user(user)
    reply = make_reply(
        request, entry.email, accept, stamp or dt.datetime.now(dt.UTC), entry.timezone
    )
    log_odds = feature_log_odds(model, row, user, "accept")
    return Decision(
        accept=accept,
        probability=float(proba[0, 1]),
        threshold=cost_false_accept / (cost_false_accept + cost_false_decline),
        features=features,
        log_odds=log_odds,
        reply=reply.to_ical(),
        reasons=tuple(reasons(log_odds, features)),
        expected_loss=dict(
            zip(LABELS, (float(v) for v in expected_loss(proba, loss)[0]), strict=True)
        ),
    )


def learn(
    store: FeedbackStore,
    request_path: str | Path,
    user: str,
    accepted: bool,
    calendar_path: str | Path,
    directory: Directory,
    model: TaskNaiveBayes | None = None,
) -> dict[str, str]:
    """Record the user's real answer; update ``model`` with it (``partial_fit``) if given."""
    request = read_calendar(request_path)
    features = extract_features(request, read_calendar(calendar_path), directory, user)
    uid = str(request_event(request, directory.user(user).email)["UID"])
    store.record(user, uid, features, accepted)
    if model is not None:
        add_answer(model, features, user, accepted)
    return features


def add_answer(model: TaskNaiveBayes, features: dict[str, str], user: str, accepted: bool) -> None:
    """Update a fitted model with one answer (``partial_fit`` on one row)."""
    row = pd.DataFrame([features], columns=list(FEATURE_NAMES))
    model.partial_fit(row, np.array([LABELS[int(accepted)]]), np.array([user], dtype=object))


def add_answer_to_file(
    path: str | Path, features: dict[str, str], user: str, accepted: bool
) -> None:
    """Load, update and save a model file under its update lock: concurrent answers all count."""
    with update_lock(path):
        model = load(path)
        add_answer(model, features, user, accepted)
        model.save(path)


def fit_from_frames(
    frames: list[pd.DataFrame], inference: str = "bhc", seed: int = 0
) -> ClusteredNB:
    """Clustered NB over the meeting schema from frames of ``user``, ``accepted``, features."""
    data = pd.concat(frames, ignore_index=True)
    if data.empty:
        raise MeetingError("there are no recorded decisions to learn from")
    model = ClusteredNB(
        inference=inference, schema=meeting_schema(), random_state=seed, progress=False
    )
    return model.fit(data[list(FEATURE_NAMES)], data["accepted"], data["user"])
