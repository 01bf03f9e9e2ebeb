"""The assistant: decide a request under the user's costs, learn from the user's answers."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from clusterednb.exceptions import check_choice
from clusterednb.loading import load
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.meeting.answer_store import FeedbackStore
from clusterednb.meeting.calendar import extract_features
from clusterednb.meeting.deciding import Decision, meeting_loss
from clusterednb.meeting.directory import Directory
from clusterednb.meeting.errors import MeetingError
from clusterednb.meeting.features import FEATURE_NAMES, LABELS, meeting_schema
from clusterednb.meeting.invitation import read_calendar, request_event
from clusterednb.meeting.invitation_decision import Invitee, decide_invitation
from clusterednb.meeting.reply import make_reply
from clusterednb.meeting.rules import PersonRules, meeting_span, now
from clusterednb.naive_bayes.clustered import ClusteredNB
from clusterednb.naive_bayes.estimator import TaskNaiveBayes
from clusterednb.persistence.model_file import update_lock


def _refuse_begun(event, zone: str, where: str | Path) -> None:
    """Refuse a meeting that has begun (ended or under way) as the service does, which
    records such an invitation as expired and never answers it."""
    start, end = meeting_span(event, ZoneInfo(zone))
    current = now()
    if start <= current:
        state = "ended" if end <= current else "is under way"
        raise MeetingError(
            f"{where}: the meeting began {start.isoformat()} and {state}; an invitation is "
            "never answered once its meeting has begun (the service records it as expired)"
        )


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
    """Decide one request file for ``user`` with a fitted model (labels ``decline``/``accept``),
    never asking: :func:`~clusterednb.meeting.deciding.decide_or_ask` with an ask band of 0.

    The request's 15 features are computed against the user's calendar and the directory;
    the decision minimises the posterior expected loss under the two costs, and the reply
    is the RFC 5546 ``REPLY`` the user would send.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> folder, directory = toy.world()
    >>> decision = decide(toy.fitted_model(), folder / "pending/user00/request-0.ics", "user00",
    ...                   folder / "calendars/user00.ics", directory)
    >>> b"METHOD:REPLY" in decision.reply, sorted(decision.expected_loss)
    (True, ['accept', 'decline'])
    """
    if model is None:
        raise MeetingError("no model: fit one first (cnb meeting fit)")
    meeting_loss(cost_false_accept, cost_false_decline)  # the costs are checked first
    request = read_calendar(request_path)
    entry = directory.user(user)
    _refuse_begun(request_event(request, entry.email), entry.timezone, request_path)
    invitee = Invitee(
        user,
        entry.email,
        entry,
        PersonRules(time_zone=entry.timezone),
        (cost_false_accept, cost_false_decline),
        jobs=directory.jobs,
    )
    found = decide_invitation(request, invitee, read_calendar(calendar_path), model, 0.0)
    decision = found.decision
    reply = make_reply(
        request, entry.email, decision.accept, stamp or dt.datetime.now(dt.UTC), entry.timezone
    )
    return replace(decision, reply=reply.to_ical())


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
    >>> from clusterednb.examples import meeting as toy
    >>> from clusterednb.meeting.answer_store import FeedbackStore
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
    >>> from clusterednb.examples import meeting as toy
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
    >>> from clusterednb.examples import models as core_toy
    >>> from clusterednb.examples import meeting as toy
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


ASSISTANT_KINDS = ("cnb-logistic", "cnb-bhc", "cnb-gibbs")
"""The models the assistant can decide with (``cnb meeting fit --kind``)."""

DEFAULT_KIND = "cnb-logistic"
"""The assistant's model unless told otherwise: the one that wins protocol T on the simulated
organisation (BENCHMARKS.md, "The assistant's model")."""


def fit_from_frames(
    frames: list[pd.DataFrame],
    inference: str | None = None,
    seed: int = 0,
    calibration: str | None = "sigmoid",
    kind: str = DEFAULT_KIND,
) -> ClusteredNB | ClusteredLogisticRegression:
    """The assistant's model over the meeting features, from frames of ``user``,
    ``accepted`` and the 15 features.

    ``kind`` (:data:`ASSISTANT_KINDS`): "cnb-logistic", the clustered logistic regression
    (its probabilities come from regressions, so it is not recalibrated), or Clustered NB by
    BHC ("cnb-bhc") or Gibbs ("cnb-gibbs"). The assistant thresholds each person's
    probability of accepting at their own costs, so Clustered NB's probabilities are
    calibrated by default (``calibration="sigmoid"``: naive Bayes' over-confident log-odds
    shrunk by a map learnt on out-of-fold answers; identity while fewer than five answers of
    either kind are recorded). On a simulated organisation this cut the realised loss by up to
    46 % where one kind of mistake costs far more (BENCHMARKS.md, "The meeting assistant's
    decisions"). ``inference`` ("bhc" or "gibbs") is the older way of naming a Clustered NB.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> fit_from_frames([toy.organisation().requests], kind="cnb-bhc").partition_.tolist()
    [0, 0, 1, 1]
    >>> model = fit_from_frames([toy.organisation().requests], kind="cnb-logistic")
    >>> model.classes_.tolist(), model.task_ids_.size
    (['decline', 'accept'], 4)
    >>> fit_from_frames([toy.organisation().requests.iloc[:0]])
    Traceback (most recent call last):
    ...
    clusterednb.meeting.errors.MeetingError: there are no recorded decisions to learn from
    """
    if inference is not None:
        kind = f"cnb-{inference}"
    check_choice("the assistant's model", kind, ASSISTANT_KINDS, MeetingError)
    data = pd.concat(frames, ignore_index=True)
    if data.empty:
        raise MeetingError("there are no recorded decisions to learn from")
    X, y, users = data[list(FEATURE_NAMES)], data["accepted"], data["user"]
    if kind == "cnb-logistic":
        if set(pd.unique(y)) - set(LABELS):
            raise MeetingError(f"the answers must be {list(LABELS)}, got {sorted(set(y))}")
        regression = ClusteredLogisticRegression(
            schema=meeting_schema(), numeric=None, handle_unknown="ignore", random_state=seed
        )
        return regression.fit(X, y, users)
    model = ClusteredNB(
        inference=kind.removeprefix("cnb-"),
        schema=meeting_schema(),
        alpha="auto",  # a person with few answers starts from the organisation's accept rate
        calibration=calibration,
        random_state=seed,
        progress=False,
    )
    return model.fit(X, y, users)
