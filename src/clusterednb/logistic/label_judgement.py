"""What :class:`~clusterednb.ClusteredLogisticRegression` (``relevance=True``) found of the
columns' relevance to the label (:mod:`~clusterednb.logistic.clustering.label_relevance`):
the fit that reads the columns the tuning kept, and the judgement it keeps and reports.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clusterednb.logistic.clusters import LogisticClusters, fit_clusters
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.settings import FitSettings
from clusterednb.logistic.tuning import Tuning


def fit_judged(
    data: JointData, settings: FitSettings, rng: np.random.Generator, tuning: Tuning
) -> tuple[JointData, LogisticClusters]:
    """The rows reading the columns the tuning kept, and the fit on them (with
    ``settings.relevance``, the columns' relevance to the label kept in the clusters).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> import pandas as pd
    >>> settings = FitSettings(effective_rows=5.0, floor=0.2, relevance=True)
    >>> rows, clusters = fit_judged(toy.joint_data(), settings, np.random.default_rng(0),
    ...                             Tuning(settings, pd.DataFrame()))
    >>> rows.label_columns is None, clusters.label_relevance.shape
    (True, (1,))
    """
    data = data.reading(tuning.label_columns)
    clusters = fit_clusters(data, settings, rng, tuning.feature_relevance)
    if settings.relevance:
        clusters = with_label_relevance(clusters, data, tuning.label_relevance, settings.beta)
    return data, clusters


def with_label_relevance(
    clusters: LogisticClusters, data: JointData, relevance: np.ndarray | None, beta: float
) -> LogisticClusters:
    """``clusters`` with the columns' relevance to the label and the columns ``data``'s
    regressions read: ``relevance`` (n_features,) as the tuning judged it, or, when it
    judged none, judged here on the clusters' partition (reported; nothing left out).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data = toy.joint_data()
    >>> clusters = fit_clusters(data, FitSettings(effective_rows=5.0, floor=0.2),
    ...                         np.random.default_rng(0))
    >>> judged = with_label_relevance(clusters, data, None, 1.0)
    >>> judged.label_relevance.shape, judged.label_columns is None
    ((1,), True)
    """
    if relevance is None:
        relevance = data.label_relevance_in(clusters.partition, beta)
    columns = data.label_columns
    return replace(
        clusters,
        label_relevance=relevance,
        label_columns=None if columns is None else columns.astype(np.float64),
    )


def columns_left_out(clusters: LogisticClusters, names: np.ndarray) -> np.ndarray:
    """The names (of ``names``, shape (n_features,)) of the columns the regressions of
    ``clusters`` do not read.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> clusters = replace(toy.fitted_clusters(), label_columns=np.array([0.0]))
    >>> columns_left_out(clusters, np.array(["f"], dtype=object)).tolist()
    ['f']
    """
    read = clusters.label_columns
    return names[:0] if read is None else names[read == 0]
