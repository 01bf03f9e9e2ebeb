"""What :class:`~clusterednb.ClusteredLogisticRegression` (``relevance=True``) found of the
columns' relevance to the label (:mod:`~clusterednb.logistic.clustering.label_relevance`):
the fit that reads the columns the tuning kept, and the judgement it keeps and reports; and
the fit again with the label weights that do not differ between its clusters held shared in
the partition's score (:mod:`~clusterednb.logistic.clustering.shared_slopes`), kept when its
tuning predicts the rows it held out better (:func:`fit_judging`); and all of it again on the
columns the label evidence keeps at the fit's partition
(:mod:`~clusterednb.logistic.clustering.column_evidence`, :func:`fit_tuned`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from clusterednb.logistic.clustering.column_evidence import LabelledRows, evidence_columns
from clusterednb.logistic.clustering.label_relevance import (
    POOLED_Z,
    WITHIN_TASK_Z,
    pooled_dependence,
    within_task_dependence,
)
from clusterednb.logistic.clusters import LogisticClusters, fit_clusters
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.grid_walk import mean_log_loss
from clusterednb.logistic.partition import judged_differing, partition_posterior
from clusterednb.logistic.settings import FitSettings
from clusterednb.logistic.tuning import Tuning, choose_settings, floors_rewalked
from clusterednb.seeding import side_stream

EVIDENCE_BY_SLOPE = True
"""The label evidence reads a numeric column by its number, one slope, as the partition's
score does (where that reads numbers: ``JointData.label_numbered``); False: by its bins'
one-hot, as before 2026-12-02 (tests that rebuild a scenario of that reading set it). Why:
with six rows a user and 20 noise columns, the bins' five weights a cluster cost a signal
column more than its fit gained, and the evidence left out x2 on two seeds of five
(BENCHMARKS.md, "The label evidence reads numbers by their slopes")."""


def labelled_rows(data: JointData) -> LabelledRows:
    """The labelled rows of ``data`` as the label evidence reads them: a numeric column by
    its standardised number where the partition's score reads it so
    (:data:`EVIDENCE_BY_SLOPE`).

    Examples
    --------
    >>> data = JointData.from_codes(np.array([[0, 1], [1, 0]]), np.array([1, 0]),
    ...     np.array([0, 1]), 2, np.array([0, 2, 4]), numeric=np.array([[0.5], [-0.5]]),
    ...     numeric_features=np.array([1]))
    >>> labelled_rows(data).design(np.array([True, True])).toarray().tolist()
    [[1.0, 0.0, 0.5, 1.0], [0.0, 1.0, -0.5, 1.0]]
    """
    labelled = data.labelled
    numbered = data.label_numbered if EVIDENCE_BY_SLOPE else None
    return LabelledRows(
        data.codes[labelled],
        data.y[labelled],
        data.task_starts,
        data.offsets,
        None if numbered is None else data.numeric[labelled],
        numbered,
    )


def fit_tuned(
    data: JointData, settings: FitSettings, rng: np.random.Generator, evidence: bool = True
) -> tuple[Tuning, JointData, LogisticClusters]:
    """:func:`fit_judging`, and with ``settings.relevance`` (tables, settings chosen on held
    rows; ``evidence``) the same again reading only the columns the label evidence keeps at its
    partition
    (:func:`~clusterednb.logistic.clustering.column_evidence.evidence_columns`), where those
    are not the columns it read: its later judgements then choose among those columns only.

    Why: the label rounds judge columns on clusters the noise formed, and choose among them
    by held-out rows (60 with six rows a user), which rejected the right columns one time in
    two; at the fitted partition the evidence kept them (BENCHMARKS.md, "The label evidence
    chooses the columns").

    Returns
    -------
    tuning : Tuning
    data : JointData
        The rows reading the columns that tuning kept.
    clusters : LogisticClusters

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> settings = FitSettings(effective_rows=5.0, floor=0.2, relevance=True)
    >>> tuning, rows, clusters = fit_tuned(toy.joint_data(), settings, np.random.default_rng(0))
    >>> rows.allowed_columns is None  # its one column is kept
    True
    """
    first = fit_judging(data, settings, rng)
    if not (evidence and settings.relevance) or data.documents or first[0].held_rows.size == 0:
        return first
    return evidence_refit(first, data, settings, rng)


def evidence_refit(
    first: tuple[Tuning, JointData, LogisticClusters],
    data: JointData,
    settings: FitSettings,
    rng: np.random.Generator,
) -> tuple[Tuning, JointData, LogisticClusters]:
    """``first`` (what :func:`fit_judging` gave on ``data``), or, where the label evidence at
    its partition keeps other columns than it read, :func:`fit_judging` reading only those
    (the clusters then keep the columns ``first`` read, ``first_label_columns``: trees on
    the clusters read those too, :class:`~clusterednb.ClusteredLearner`)."""
    _, fitted, clusters = first
    rows = labelled_rows(data)
    columns = evidence_columns(rows, clusters.partition, settings.precision)
    read = fitted.label_columns
    read = np.ones_like(columns) if read is None else read
    if np.array_equal(columns, read):
        return first
    tuning, fitted, refitted = fit_judging(data.allowing(columns), settings, rng)
    return tuning, fitted, replace(refitted, first_label_columns=read.astype(np.float64))


def fit_judging(
    data: JointData, settings: FitSettings, rng: np.random.Generator
) -> tuple[Tuning, JointData, LogisticClusters]:
    """Choose the settings (:func:`~clusterednb.logistic.tuning.choose_settings`) and fit;
    with ``settings.relevance``, then judge on the fit's partition which columns' label
    weights differ between its clusters
    (:func:`~clusterednb.logistic.partition.judged_differing`), and where some do not, fit
    again with them held shared in the partition's score, unless the held-out rows say
    otherwise: the tuning's floors are walked again with them held shared
    (:func:`~clusterednb.logistic.tuning.floors_rewalked`), and the new floor is taken where
    it predicts the held rows better, the first tuning's settings where they predict them
    alike (the walk's partitions did not depend on those weights: the fit's evidence
    decides), and the first fit kept where they predict them worse. Without held-out rows
    (settings given, or chosen on a subset of the tasks) the first fit is kept.

    Why on the fit's partition: the tuning's partitions see fewer labels, and with six
    labelled rows a task they left every noise column differing where the fit's own
    partition told them apart (the module of
    :mod:`~clusterednb.logistic.clustering.shared_slopes` has the numbers).

    Returns
    -------
    tuning : Tuning
        What the kept fit's tuning found.
    data : JointData
        The rows reading the columns that tuning kept.
    clusters : LogisticClusters

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> settings = FitSettings(effective_rows=5.0, floor=0.2, relevance=True)
    >>> tuning, rows, clusters = fit_judging(toy.joint_data(), settings,
    ...                                      np.random.default_rng(0))
    >>> clusters.partition.shape, clusters.differing_columns is None
    ((3,), True)
    """
    tuning = choose_settings(data, settings, rng)
    fitted, clusters = fit_judged(data, tuning.settings, rng, tuning)
    if not settings.relevance or data.documents or tuning.held_rows.size == 0:
        return tuning, fitted, clusters
    differing = judged_differing(data, tuning.settings, clusters.partition)
    loud = _loud_columns(data, rng) if differing.all() else None  # the tests when needed
    if loud is not None:
        differing = _judged_again(data, tuning.settings, clusters, loud, rng)
    read = np.ones_like(differing) if fitted.label_columns is None else fitted.label_columns
    if (differing | ~read).all():  # a column the regressions do not read has no weights
        return tuning, fitted, clusters
    loud = _loud_columns(data, rng) if loud is None else loud
    columns = _columns_read(read, differing, loud)
    second = floors_rewalked(data, settings, rng, tuning, differing, columns)
    first_loss = mean_log_loss(data.y[tuning.held_rows], tuning.held_proba)
    if second is None or second.held_log_loss > first_loss:
        return tuning, fitted, clusters
    if second.held_log_loss == first_loss:  # the held rows cannot tell
        second = tuning._replace(differing=differing)
    return (second, *fit_judged(data, second.settings, rng, second))


def _loud_columns(data: JointData, rng: np.random.Generator) -> np.ndarray:
    """The columns that depend on the label beyond chance over all rows or within tasks
    (:func:`~clusterednb.logistic.clustering.label_relevance.pooled_dependence` above
    :data:`~clusterednb.logistic.clustering.label_relevance.POOLED_Z`, or
    :func:`~clusterednb.logistic.clustering.label_relevance.within_task_dependence` above
    :data:`~clusterednb.logistic.clustering.label_relevance.WITHIN_TASK_Z`); bool, shape
    (n_features,). Drawn from a side stream of ``rng``."""
    rows = data.labelled
    labelled = (data.codes[rows], data.y[rows])
    numbers = {"numbers": data.numeric[rows], "numbered": data.numeric_features}
    tests_rng = side_stream(rng)
    pooled = pooled_dependence(*labelled, data.offsets, tests_rng, **numbers)
    within = within_task_dependence(*labelled, data.task[rows], data.offsets, tests_rng, **numbers)
    return (pooled > POOLED_Z) | (within > WITHIN_TASK_Z)


def _judged_again(
    data: JointData,
    settings: FitSettings,
    clusters: LogisticClusters,
    loud: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Where the fit's partition told no column apart (its clusters differ in nothing, or in
    everything), the columns whose label weights differ, judged on a partition sampled with
    the label score reading only the ``loud`` columns (:func:`_loud_columns`), if some are
    and some are not (else all differ): with six rows a user and 20 noise columns, the fit's
    partition was no better than chance on most seeds, and one scored on the loud columns
    (the signals and at most one noise column) found the groups on some.
    """
    if not loud.any() or loud.all():
        return np.ones_like(loud)
    relevance = clusters.feature_relevance
    start = partition_posterior(data, settings, side_stream(rng), relevance, loud)
    return judged_differing(data, settings, start.partition)


def _columns_read(
    read: np.ndarray | None, differing: np.ndarray, loud: np.ndarray
) -> np.ndarray | None:
    """The columns the refit's regressions read: those ``read`` (None: all) but the ones
    whose label weights are shared by every cluster (not ``differing``) and that are not
    ``loud`` (:func:`_loud_columns`): no cluster's slope on them, no common one, no task's
    own. None: all.

    Examples
    --------
    >>> _columns_read(None, np.array([True, False, False]), np.array([False, True, False]))
    array([ True,  True, False])
    """
    columns = np.ones(differing.size, dtype=bool) if read is None else read.copy()
    columns &= differing | loud
    return None if columns.all() else columns


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
    clusters = fit_clusters(data, settings, rng, tuning.feature_relevance, tuning.differing)
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


JUDGED_ATTRIBUTES = ("feature_relevance_", "label_relevance_", "columns_left_out_")
JUDGED_ATTRIBUTES += ("label_weights_shared_", "columns_first_left_out_")
"""The fitted attributes :func:`judged_attributes` may set (a fit without a judgement
leaves none of a previous fit's)."""


def judged_attributes(clusters: LogisticClusters, names: np.ndarray) -> dict[str, np.ndarray]:
    """The fitted attributes of the judgements ``clusters`` hold (``names``, shape
    (n_features,), the features' names): ``feature_relevance_``, and with the label's
    judgement ``label_relevance_``, ``columns_left_out_`` and ``label_weights_shared_``;
    where the label evidence fitted again, ``columns_first_left_out_`` (the first fit's).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> judged_attributes(toy.fitted_clusters(), np.array(["f"], dtype=object))
    {}
    """
    attributes = {}
    if clusters.feature_relevance is not None:
        attributes["feature_relevance_"] = clusters.feature_relevance
    if clusters.label_relevance is not None:
        attributes["label_relevance_"] = clusters.label_relevance
        attributes["columns_left_out_"] = names_off(names, clusters.label_columns)
        attributes["label_weights_shared_"] = names_off(names, clusters.differing_columns)
    if clusters.first_label_columns is not None:
        attributes["columns_first_left_out_"] = names_off(names, clusters.first_label_columns)
    return attributes


def set_judged_attributes(estimator: Any, clusters: LogisticClusters, names: np.ndarray) -> None:
    """Set :func:`judged_attributes` on a fitted ``estimator``, and remove those of a previous
    fit that this one does not set (a fit without relevance shows none)."""
    for name in JUDGED_ATTRIBUTES:
        estimator.__dict__.pop(name, None)
    for name, value in judged_attributes(clusters, names).items():
        setattr(estimator, name, value)


def names_off(names: np.ndarray, flags: np.ndarray | None) -> np.ndarray:
    """The names (of ``names``, shape (n_features,)) whose ``flags`` (1.0/0.0 per feature,
    as the clusters keep them; None: every one on) are 0: the columns the regressions do not
    read (``label_columns``), or whose label weights the partition's score held shared
    (``differing_columns``).

    Examples
    --------
    >>> names_off(np.array(["f", "g"], dtype=object), np.array([0.0, 1.0])).tolist()
    ['f']
    >>> names_off(np.array(["f"], dtype=object), None).tolist()
    []
    """
    return names[:0] if flags is None else names[flags == 0]
