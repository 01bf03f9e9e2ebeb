"""One more answer: how :meth:`~clusterednb.ClusteredLogisticRegression.partial_fit` updates
a fit.

The new rows join the training rows. The partition posterior is sampled again (a quarter of
the sampler's sweeps, as :class:`~clusterednb.ClusteredNB`'s warm refit) when a task is new,
when the rows added since it was last sampled reach :data:`RESAMPLE_AFTER` of the rows it was
sampled on, or when the fit does not hold the regressions' task weights (a file written
before them). Otherwise the posterior is kept — one answer among thousands barely moves it —
and the cluster regressions are fitted again under the same task weights, each from its
previous minimum: the same weighted objectives a refit under that posterior solves, to the
same tolerance, in a Newton step or two instead of a chain and regressions from the pooled
fit. The kept partition's ``log_joint`` is that of the rows it was sampled on.

A few answers among very many rows (at most :data:`LOCAL_SHARE` of the labelled rows the
regressions were last fitted on, counting every answer since) move the shared weights by
about that share, but their tasks' own weights (each task's intercept column) by a full
step: then only those columns are refitted, in every regression at once, by Newton's method
on the tasks' own rows (to a decrement of 1e-12), and the clusters' tempered counts are
updated for them. A partial fit of one answer costs the task's rows, not the population's
(10⁶ tasks: well under a second instead of a minute); once the answers since the last full
fit pass the share, every regression is fitted again.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.special import expit

from clusterednb.inference.blocks.engine import BlockClustering
from clusterednb.logistic.clustering.feature_relevance import kept_values
from clusterednb.logistic.clustering.task_hessians import ranges
from clusterednb.logistic.clusters import LogisticClusters, assemble, fit_clusters
from clusterednb.logistic.documents import task_value_counts
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.settings import FitSettings, task_tempering

RESAMPLE_AFTER = 0.05
"""Rows added since the partition posterior was sampled, as a share of the rows it was
sampled on, at which a partial fit samples it again."""
LOCAL_SHARE = 1e-5
"""Labelled rows added since the regressions were last fitted, as a share of the rows they
were fitted on, up to which a partial fit refits only the answering tasks' own weights."""
LOCAL_TOLERANCE = 1e-12
"""The Newton decrement at which a task's own weights stop."""


def partial_update(
    previous: LogisticClusters,
    data: JointData,
    settings: FitSettings,
    n_known_tasks: int,
    rng: np.random.Generator,
    held: JointData | None = None,
) -> LogisticClusters:
    """The fit of ``data`` (the previous training rows and the new ones; tasks numbered as
    before, new tasks after the ``n_known_tasks`` known ones) updated from ``previous``;
    ``held``, the previous training rows, allows the answering tasks' local refit.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data, settings = toy.joint_data(), FitSettings(effective_rows=5.0, floor=0.2)
    >>> fitted = fit_clusters(data, settings, np.random.default_rng(0))
    >>> again = partial_update(fitted, data, settings, data.n_tasks, np.random.default_rng(1))
    >>> bool(np.array_equal(again.partition, fitted.partition))  # nothing added: kept
    True
    """
    updated = _updated(previous, data, settings, n_known_tasks, rng, held)
    return replace(
        updated,
        label_relevance=previous.label_relevance,
        label_columns=previous.label_columns,
        first_label_columns=previous.first_label_columns,
    )


def _updated(
    previous: LogisticClusters,
    data: JointData,
    settings: FitSettings,
    n_known_tasks: int,
    rng: np.random.Generator,
    held: JointData | None,
) -> LogisticClusters:
    """:func:`partial_update` before the judgement of the columns' relevance to the label
    is carried over (the rows ``data`` read the same columns as before)."""
    added = data.y.size - previous.sampled_rows
    differing = previous.differing_columns  # the first fit's judgement, kept
    differing = None if differing is None else differing > 0
    if (
        data.n_tasks > n_known_tasks
        or previous.cluster_weights is None
        or added >= RESAMPLE_AFTER * previous.sampled_rows
    ):
        quick = replace(
            settings, n_sweeps=max(settings.n_sweeps // 4, 2), burn_in=settings.burn_in // 4
        )
        return fit_clusters(data, quick, rng, differing=differing)
    if held is not None and refits_locally(previous, data, settings):
        return task_weights_refitted(previous, held, data, settings)
    kept = BlockClustering(
        partition=previous.partition,
        log_joint=previous.log_joint,
        coclustering=previous.coclustering,
        n_clusters_probability=previous.n_clusters_probability,
        membership=previous.cluster_weights,
        feature_relevance=previous.feature_relevance,  # the judgements it was sampled under
        differing_columns=differing,
    )
    clusters = assemble(data, kept, settings, near=previous)
    clusters = replace(clusters, sampled_rows=previous.sampled_rows)
    return clusters.with_deviations(data, settings.deviation_variance)


def refits_locally(previous: LogisticClusters, data: JointData, settings: FitSettings) -> bool:
    """Whether the answers since the regressions' last fit are few enough for
    :func:`task_weights_refitted` (and nothing else needs the full path: no task deviations).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data, settings = toy.joint_data(), FitSettings(effective_rows=5.0, floor=0.2)
    >>> fitted = fit_clusters(data, settings, np.random.default_rng(0))
    >>> more = JointData.from_codes(np.vstack([data.codes, [[0]]]), np.append(data.y, 1),
    ...                             np.append(data.task, 2), 3, data.offsets)
    >>> refits_locally(fitted, more, settings)  # five labelled rows: one more is a fifth
    False
    """
    added = data.labelled.size - previous.fitted_rows
    return (
        previous.fitted_rows > 0
        and previous.deviations is None
        and settings.deviation_variance == 0
        and 0 <= added <= LOCAL_SHARE * previous.fitted_rows
    )


def task_weights_refitted(
    previous: LogisticClusters, held: JointData, data: JointData, settings: FitSettings
) -> LogisticClusters:
    """``previous`` with the own weights (task columns) of the tasks whose rows ``data`` adds
    to ``held`` refitted in every regression, and their clusters' tempered counts updated.

    Task ``u``'s column ``θ_k`` of regression ``k`` minimises
    ``m_u(k) Σ_r loss(y_r, a_rk + θ_k) + θ_k² / (2C)`` over the task's labelled rows, with
    ``a_rk`` the row's margin from the other columns and ``m_u(k)`` the task's weight in the
    regression (``floor + (1 − floor) q_u(k)``; 1 in the pooled one).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data, settings = toy.joint_data(), FitSettings(effective_rows=5.0, floor=0.2)
    >>> fitted = fit_clusters(data, settings, np.random.default_rng(0))
    >>> more = JointData.from_codes(np.vstack([data.codes, [[0]]]), np.append(data.y, 1),
    ...                             np.append(data.task, 2), 3, data.offsets)
    >>> again = task_weights_refitted(fitted, data, more, settings)
    >>> bool(again.coef[0, 2 + 2] > fitted.coef[0, 2 + 2])  # task 2's own weight rose
    True
    """
    coef, intercept = previous.coef.copy(), previous.intercept
    first_task_column = int(data.offsets[-1])
    grown = np.flatnonzero(data.rows_per_task[: held.n_tasks] != held.rows_per_task)
    floor = float(settings.floor)
    for task in grown:
        weights = np.append(floor + (1.0 - floor) * previous.cluster_weights[task], 1.0)
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        column = first_task_column + task
        margin = data.design(rows) @ coef.T + intercept - coef[:, column]
        coef[:, column] = own_weight(
            margin, data.y[rows].astype(np.float64), weights, settings.C, coef[:, column]
        )
    counts = previous.cluster_value_counts.copy()
    relevance = previous.feature_relevance
    kept = 1.0 if relevance is None else kept_values(relevance, data.offsets)
    for rows, sign in ((data, 1.0), (held, -1.0)):
        task_counts, n_rows = counts_of_tasks(rows, grown)
        tempered = task_counts * task_tempering(n_rows, float(settings.effective_rows))[:, None]
        np.add.at(counts, previous.partition[grown], sign * tempered * kept)
    return replace(previous, coef=coef, cluster_value_counts=counts)


def counts_of_tasks(data: JointData, tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Feature-value counts and rows (labelled or not) of ``tasks`` only, shapes
    (len(tasks), n_values_total) and (len(tasks),): what ``data.value_counts[tasks]`` and
    ``data.rows_per_task[tasks]`` hold, from those tasks' rows alone.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data = toy.joint_data()
    >>> counts, n_rows = counts_of_tasks(data, np.array([2]))
    >>> counts.tolist(), n_rows.tolist(), data.value_counts[[2]].tolist()
    ([[1, 1]], [2], [[1, 1]])
    """
    starts = np.searchsorted(data.task, tasks, side="left")
    stops = np.searchsorted(data.task, tasks, side="right")
    positions = ranges(starts, stops)
    local_task = np.repeat(np.arange(tasks.size), stops - starts)
    counts = task_value_counts(data.codes[positions], local_task, tasks.size, data.offsets)
    return counts, stops - starts


def own_weight(
    margin: np.ndarray, y: np.ndarray, weights: np.ndarray, C: float, start: np.ndarray
) -> np.ndarray:
    """The task column's weight in each regression by Newton's method, shape (K + 1,).

    Parameters
    ----------
    margin : ndarray of shape (n_rows, K + 1)
        The rows' margins without the task column.
    y : ndarray of shape (n_rows,)
    weights : ndarray of shape (K + 1,)
        The task's row weight in each regression.
    C : float
        Inverse penalty.
    start : ndarray of shape (K + 1,)

    Examples
    --------
    One row ``y = 1`` at margin 0, weight 1, ``C = 1``: ``θ`` solves ``σ(θ) − 1 + θ = 0``.

    >>> theta = own_weight(np.zeros((1, 1)), np.ones(1), np.ones(1), 1.0, np.zeros(1))
    >>> bool(abs(expit(theta[0]) - 1 + theta[0]) < 1e-9)
    True
    """
    theta = start.astype(np.float64).copy()
    for _ in range(100):
        probability = expit(margin + theta)
        gradient = weights * (probability - y[:, None]).sum(axis=0) + theta / C
        curvature = weights * (probability * (1.0 - probability)).sum(axis=0) + 1.0 / C
        step = gradient / curvature
        theta -= step
        if float(np.max(0.5 * gradient * step)) < LOCAL_TOLERANCE:
            break
    return theta
