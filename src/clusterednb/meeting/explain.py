"""Which features pushed a decision: per-feature log-odds under a user's predictive."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from clusterednb.models import TaskNaiveBayes


def feature_log_odds(
    model: TaskNaiveBayes, features: pd.DataFrame, user: Any, positive: Any
) -> pd.Series:
    """Each feature's log-odds contribution ``log P(x_f | positive) − log P(x_f | other)``.

    For a user seen in training, the contributions are averaged over the user's posterior
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
    """
    if len(model.classes_) != 2:
        raise ValueError("feature log-odds need a binary label")
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
