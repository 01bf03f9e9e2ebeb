"""Choosing the prior on a numeric column's bins (``bin_precision="auto"``) on held rows.

The regressions read a number raw (its slope) and as the one-hot of its bins (a curve); how
tightly the bins' weights are held to 0 says how much curve the labels may buy. Once the
tuning's walk (:mod:`clusterednb.logistic.tuning`) has found its best effective rows and
floor, that setting's clusters are fitted again under other precisions of
:data:`~clusterednb.logistic.settings.BIN_PRECISIONS`, walked from
:data:`~clusterednb.logistic.settings.DEFAULT_BIN_PRECISION` towards tighter while the held
rows' mean log-loss falls, else towards looser (:func:`~clusterednb.logistic.grid_walk.
walk_grid` along one axis). Only the regressions change: the partition posterior is the
setting's own, and each fit starts from its clusters' regressions. A table without numbers
has no bins: nothing is walked.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clusterednb.logistic.clusters import assemble, design_precision, labelled_regression
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.grid_walk import (
    TUNING_TOLERANCE,
    SettingScores,
    held_proba,
    mean_log_loss,
    walk_grid,
)
from clusterednb.logistic.settings import BIN_PRECISIONS


def has_bins(data: JointData) -> bool:
    """Whether ``data``'s regressions read a numeric column's bins (whose prior
    ``bin_precision`` sets).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> has_bins(toy.joint_data())  # categories only
    False
    """
    return bool(np.any(design_precision(data, 2.0) != 1.0))


def bins_walked(scores: SettingScores) -> list[dict]:
    """Walk :data:`~clusterednb.logistic.settings.BIN_PRECISIONS` at ``scores``' best setting
    (see the module); ``scores.best`` becomes the best precision's clusters (its
    ``bin_precision`` the precision), and what was tried is returned, one row per precision
    fitted (the walked setting's own row is already in ``scores.tried``).

    Parameters
    ----------
    scores : SettingScores
        The walk's scores, its settings' ``bin_precision`` the one the walk was fitted under
        (:data:`~clusterednb.logistic.settings.DEFAULT_BIN_PRECISION`).

    Returns
    -------
    list of dict
        ``effective_rows``, ``floor``, ``deviation_scale`` (0), ``bin_precision``,
        ``n_clusters`` and ``log_loss`` of each precision tried.
    """
    best = scores.best
    if best.clusters is None or best.rows not in scores.clusterings:
        return []
    walked = float(scores.settings.bin_precision)
    losses = {BIN_PRECISIONS.index(walked): best.loss}
    tried: list[dict] = []

    def loss(position: int, _floor: int) -> float:
        if position not in losses:
            losses[position] = _bins_loss(scores, BIN_PRECISIONS[position], tried)
        return losses[position]

    walk_grid(loss, len(BIN_PRECISIONS), 1, BIN_PRECISIONS.index(walked))
    return tried


def _bins_loss(scores: SettingScores, bin_precision: float, tried: list[dict]) -> float:
    """The held rows' mean log-loss of the best setting's clusters fitted again with the bins'
    prior ``bin_precision``; ``scores.best`` takes them where they beat it."""
    best = scores.best
    settings = replace(scores.settings, bin_precision=bin_precision).with_chosen(
        best.effective_rows, best.floor
    )
    near = best.clusters
    regression = labelled_regression(scores.train, settings, TUNING_TOLERANCE)
    regression.pooled_start = np.append(near.coef[-1], near.intercept[-1])
    clustering = scores.clusterings[best.rows]
    clusters = assemble(
        scores.train, clustering, settings, regression, near=near, for_tasks=scores.held_tasks
    )
    proba = held_proba(scores.data, scores.held, scores.design, clusters, with_task=False)
    loss = mean_log_loss(scores.data.y[scores.held], proba)
    tried.append(
        {
            "effective_rows": best.effective_rows,
            "floor": best.floor,
            "deviation_scale": 0.0,
            "bin_precision": bin_precision,
            "n_clusters": int(clustering.partition.max()) + 1,
            "log_loss": loss,
        }
    )
    if loss < best.loss:
        best.loss, best.bin_precision = loss, bin_precision
        best.clusters, best.proba = clusters, proba
    return loss
