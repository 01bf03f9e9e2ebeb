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

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> folder, directory = toy.world()
    >>> decision = decide(toy.fitted_model(), folder / "pending/user00/request-0.ics", "user00",
    ...                   folder / "calendars/user00.ics", directory, cost_false_accept=3.0)
    >>> decision.threshold, decision.accept == (decision.probability > 0.75)
    (0.75, True)
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

        Examples
        --------
        >>> from clusterednb.meeting import toy
        >>> folder, directory = toy.world()
        >>> decision = decide(toy.fitted_model(), folder / "pending/user02/request-1.ics",
        ...                   "user02", folder / "calendars/user02.ics", directory)
        >>> lines = decision.summary(top=2).splitlines()
        >>> lines[0].startswith("decision: "), len(lines)
        (True, 4)
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
    """Decide one request for ``user`` with a fitted model (labels ``decline``/``accept``).

    The request's 15 features are computed against the user's calendar and the directory;
    the decision minimises the posterior expected loss under the two costs, and the reply
    is the RFC 5546 ``REPLY`` the user would send.

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> folder, directory = toy.world()
    >>> decision = decide(toy.fitted_model(), folder / "pending/user00/request-0.ics", "user00",
    ...                   folder / "calendars/user00.ics", directory)
    >>> b"METHOD:REPLY" in decision.reply, sorted(decision.expected_loss)
    (True, ['accept', 'decline'])
    """
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
    """Record the user's real answer; update ``model`` with it (``partial_fit``) if given.

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> from clusterednb.meeting.store import FeedbackStore
    >>> folder, directory = toy.world()
    >>> with FeedbackStore(folder / "answers.sqlite") as store:
    ...     features = learn(store, folder / "pending/user01/request-2.ics", "user01", True,
    ...                      folder / "calendars/user01.ics", directory)
    ...     store.frame()[["user", "accepted"]].values.tolist()
    [['user01', 'accept']]
    """
    request = read_calendar(request_path)
    features = extract_features(request, read_calendar(calendar_path), directory, user)
    uid = str(request_event(request, directory.user(user).email)["UID"])
    store.record(user, uid, features, accepted)
    if model is not None:
        add_answer(model, features, user, accepted)
    return features


def add_answer(model: TaskNaiveBayes, features: dict[str, str], user: str, accepted: bool) -> None:
    """Update a fitted model with one answer (``partial_fit`` on one row).

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> model = toy.fitted_model()
    >>> features = toy.organisation().requests.iloc[0].drop(["user", "accepted"]).to_dict()
    >>> before = model.counts_.label_counts.sum()
    >>> add_answer(model, features, "user03", accepted=False)
    >>> int(model.counts_.label_counts.sum() - before)
    1
    """
    row = pd.DataFrame([features], columns=list(FEATURE_NAMES))
    model.partial_fit(row, np.array([LABELS[int(accepted)]]), np.array([user], dtype=object))


def add_answer_to_file(
    path: str | Path, features: dict[str, str], user: str, accepted: bool
) -> None:
    """Load, update and save a model file under its update lock: concurrent answers all count.

    Examples
    --------
    >>> from clusterednb import toy as core_toy
    >>> from clusterednb.meeting import toy
    >>> path = core_toy.scratch_file("meeting.cnb")
    >>> toy.fitted_model().save(path)
    >>> features = toy.organisation().requests.iloc[0].drop(["user", "accepted"]).to_dict()
    >>> add_answer_to_file(path, features, "user00", accepted=True)
    >>> int(load(path).counts_.label_counts.sum() - toy.fitted_model().counts_.label_counts.sum())
    1
    """
    with update_lock(path):
        model = load(path)
        add_answer(model, features, user, accepted)
        model.save(path)


def fit_from_frames(
    frames: list[pd.DataFrame],
    inference: str = "bhc",
    seed: int = 0,
    calibration: str | None = "sigmoid",
) -> ClusteredNB:
    """Clustered NB over the meeting schema from frames of ``user``, ``accepted``, features.

    The assistant thresholds each person's probability of accepting at their own costs, so
    by default the probabilities are calibrated (``calibration="sigmoid"``: naive Bayes'
    over-confident log-odds shrunk by a map learnt on out-of-fold answers; identity while
    fewer than five answers of either kind are recorded). On a simulated organisation this
    cut the realised loss by up to 46 % where one kind of mistake costs far more
    (BENCHMARKS.md, "The meeting assistant's decisions").

    Examples
    --------
    >>> from clusterednb.meeting import toy
    >>> fit_from_frames([toy.organisation().requests]).partition_.tolist()
    [0, 0, 1, 1]
    >>> fit_from_frames([toy.organisation().requests.iloc[:0]])
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: there are no recorded decisions to learn from
    """
    data = pd.concat(frames, ignore_index=True)
    if data.empty:
        raise MeetingError("there are no recorded decisions to learn from")
    model = ClusteredNB(
        inference=inference,
        schema=meeting_schema(),
        alpha="auto",  # a person with few answers starts from the organisation's accept rate
        calibration=calibration,
        random_state=seed,
        progress=False,
    )
    return model.fit(data[list(FEATURE_NAMES)], data["accepted"], data["user"])
