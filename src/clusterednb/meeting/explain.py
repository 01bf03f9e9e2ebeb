"""Why the assistant decided as it did: per-feature log-odds, grouped into reasons."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.meeting.features import FEATURE_GROUPS, USUAL_DIRECTION, in_words
from clusterednb.naive_bayes.estimator import TaskNaiveBayes


def feature_log_odds(
    model: TaskNaiveBayes, features: pd.DataFrame, user: Any, positive: Any
) -> pd.Series:
    """Each feature's log-odds contribution ``log P(x_f | positive) − log P(x_f | other)``.

    For the clustered logistic regression, the coefficients of the row's values averaged over
    the user's mixture of regressions
    (:meth:`~clusterednb.ClusteredLogisticRegression.log_odds_by_feature`). For Clustered NB
    and a user seen in training, the contributions are averaged over the user's posterior
    mixture (sampled clusters, BHC path, or the user's own counts) with its weights. This is
    an explanation, not the prediction itself: the predictive of a mixture is not a sum of
    per-feature terms. A user never seen in training gets the pooled prior mixture's
    cold-start components, equally weighted by their prior weights. Binary labels only.

    Parameters
    ----------
    model : fitted TaskNaiveBayes
    features : DataFrame with one row
    user : task id
    positive : the class whose odds are shown (e.g. "accept")

    Returns
    -------
    Series
        Feature name → log-odds contribution (missing values contribute 0), largest magnitude
        first.

    Examples
    --------
    >>> from clusterednb.examples import meeting as toy
    >>> model = toy.fitted_model()
    >>> request = toy.organisation().requests.iloc[[0]]
    >>> odds = feature_log_odds(model, request[list(model.feature_names_in_)], "user00", "accept")
    >>> len(odds), bool(odds.abs().is_monotonic_decreasing)  # largest first
    (15, True)
    """
    if len(model.classes_) != 2:
        raise ValueError("feature log-odds need a binary label")
    if isinstance(model, ClusteredLogisticRegression):
        sign = 1.0 if list(model.classes_).index(positive) == 1 else -1.0
        odds = sign * model.log_odds_by_feature(features, np.array([user], dtype=object)).iloc[0]
        return odds.reindex(odds.abs().sort_values(ascending=False).index)
    codes, task_index, _ = model._encode_for_prediction(features, np.array([user], dtype=object))
    posterior = model.posterior_
    if task_index[0] >= 0:
        entries = slice(posterior.indptr[task_index[0]], posterior.indptr[task_index[0] + 1])
        components, log_weights = posterior.components[entries], posterior.log_weights[entries]
    else:
        components, log_weights = posterior.cold_components, posterior.cold_log_weights
    weights = np.exp(log_weights - np.logaddexp.reduce(log_weights))
    tables = model.observation_.log_feature_table(posterior.component_counts[components])
    pos = list(model.classes_).index(positive)
    flat = np.where(codes[0] >= 0, codes[0] + model.schema_.offsets[:-1], tables.shape[-1] - 1)
    contributions = weights @ (tables[:, pos, flat] - tables[:, 1 - pos, flat])
    series = pd.Series(contributions, index=list(model.schema_.feature_names))
    return series.reindex(series.abs().sort_values(ascending=False).index)


@dataclass(frozen=True)
class Reason:
    """One reason for a decision.

    Attributes
    ----------
    feature : str
        A feature name, or a group's name from
        :data:`~clusterednb.meeting.features.FEATURE_GROUPS`.
    value : str
        The feature's value; for a group, its members' values joined by ``" / "``.
    log_odds : float
        Log-odds of accepting it contributes (a group: the sum of its members').
    words : str
        The same in plain words (:data:`~clusterednb.meeting.features.GLOSSARY`), saying so
        when the direction surprises ("…, yet people like you usually accept despite it").

    Examples
    --------
    >>> Reason("conflict", "yes / important / weekly", -1.25).to_dict()["log_odds"]
    -1.25
    """

    feature: str
    value: str
    log_odds: float
    words: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"feature", "value", "log_odds", "words"}`` for JSON.

        Examples
        --------
        >>> Reason("duration", "30", 0.5, "lasts up to half an hour").to_dict()["words"]
        'lasts up to half an hour'
        """
        return {
            "feature": self.feature,
            "value": self.value,
            "log_odds": self.log_odds,
            "words": self.words,
        }


def reasons(log_odds: pd.Series, features: dict[str, Any]) -> list[Reason]:
    """Per-feature log-odds with each group of dependent features merged into one reason.

    Parameters
    ----------
    log_odds : Series
        Feature name → log-odds (from :func:`feature_log_odds`).
    features : dict
        Feature name → value (missing: None; a reason whose values are all missing is left
        out).

    Returns
    -------
    list of Reason
        Largest magnitude first.

    Examples
    --------
    The three conflict features restate one fact, so they make one reason:

    >>> log_odds = pd.Series({"conflict": -0.5, "conflict_importance": -0.25,
    ...                       "conflict_frequency": -0.25, "duration": 0.75})
    >>> features = {"conflict": "yes", "conflict_importance": "important",
    ...             "conflict_frequency": "weekly", "duration": "30"}
    >>> [(r.feature, r.value, r.log_odds) for r in reasons(log_odds, features)]
    [('conflict', 'yes / important / weekly', -1.0), ('duration', '30', 0.75)]
    >>> reasons(log_odds, features)[1].words
    'lasts up to half an hour'

    A clash that pushes towards accepting says why that is surprising:

    >>> clash = {"conflict": "yes", "conflict_importance": "unimportant",
    ...          "conflict_frequency": "one time"}
    >>> print(reasons(pd.Series({"conflict": 2.0}), clash)[0].words)  # doctest: +ELLIPSIS
    a clash with an unimportant event that happens once, yet people like you usually accept...
    """
    grouped = {member: group for group, members in FEATURE_GROUPS.items() for member in members}
    found: dict[str, Reason] = {}
    for name in log_odds.index:
        key = grouped.get(name, name)
        members = FEATURE_GROUPS.get(key, (name,))
        if key not in found:
            if all(features.get(m) is None for m in members):
                continue  # a missing value says nothing
            present = [m for m in members if m in log_odds.index]
            text = " / ".join(str(features.get(m)) for m in present)
            total = float(sum(log_odds[m] for m in present))
            found[key] = Reason(key, text, total, _words(key, members, features, total))
    return sorted(found.values(), key=lambda r: -abs(r.log_odds))


def _words(key: str, members: tuple[str, ...], features: dict[str, Any], total: float) -> str:
    """A reason in plain words; a clash that pushes towards accepting (or no clash that pushes
    towards declining) says that this is what people like the user usually do."""
    if key == "conflict" and features.get("conflict") == "yes":
        importance = features.get("conflict_importance")
        frequency = str(features.get("conflict_frequency") or "")
        kind = {
            "one time": "that happens once",
            "occasionally": "that recurs now and then",
            "regularly": "that recurs every week",
        }.get(frequency, "")
        event = f"{importance} event" if importance not in (None, "other") else "event"
        article = "an" if event[0] in "aeiou" else "a"
        clash = " ".join(part for part in ("a clash with", article, event, kind) if part)
        if total > 0:
            return f"{clash}, yet people like you usually accept despite such a clash"
        return clash
    phrases = [in_words(m, features.get(m)) for m in members if features.get(m) is not None]
    # the members of a group restate one fact: a part two of them say is said once
    parts = [part for phrase in phrases if phrase for part in phrase.split(", ")]
    text = ", ".join(dict.fromkeys(parts))
    if key == "conflict" and features.get("conflict") == "no" and total < 0:
        return f"{text}, yet people like you usually decline such invitations"
    return text + _surprise(members, features, total)


def _surprise(members: tuple[str, ...], features: dict[str, Any], total: float) -> str:
    """What to add when a value pushes the other way than one would expect (a critical
    invitation towards declining, a booked day towards accepting), else "".

    Examples
    --------
    >>> _surprise(("message_importance",), {"message_importance": "critical"}, -0.8)
    ', yet people like you usually decline despite it'
    >>> _surprise(("busy_fday",), {"busy_fday": "booked-busy"}, 0.5)
    ', yet people like you usually accept despite it'
    >>> _surprise(("busy_fday",), {"busy_fday": "booked-busy"}, -0.5)
    ''
    """
    for member in members:
        expected = USUAL_DIRECTION.get((member, str(features.get(member))))
        if expected is not None and expected * total < 0:
            usual = "accept" if total > 0 else "decline"
            return f", yet people like you usually {usual} despite it"
    return ""


def format_probability(p: float) -> str:
    """A probability with as many digits as it needs: 1 or 0 only when it is exactly that.

    Examples
    --------
    >>> [format_probability(p) for p in (0.5, 0.99996, 1 - 1e-14, 1.0, 2e-5)]
    ['0.500', '0.99996', '1 − 1.0e-14', '1', '2.0e-05']
    """
    if p in (0.0, 1.0):
        return str(int(p))
    if 0.001 <= p <= 0.999:
        return f"{p:.3f}"
    if p < 0.001:
        return f"{p:.1e}"
    gap = 1.0 - p
    if gap < 1e-9:
        return f"1 − {gap:.1e}"
    return f"{p:.{math.ceil(-math.log10(gap))}f}"
