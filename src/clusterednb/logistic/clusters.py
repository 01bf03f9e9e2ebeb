"""The fitting steps of :class:`~clusterednb.ClusteredLogisticRegression`, on encoded rows.

:func:`fit_clusters` runs the partition posterior and the cluster-weighted regressions;
:class:`LogisticClusters` is what a fitted model keeps (plain arrays, saved as they are);
:func:`new_task_mixture` places a task never seen in training.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from scipy.special import expit

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.inference.blocks.engine import BlockClustering, membership
from clusterednb.logistic.clustering.feature_relevance import kept_values
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.partition import partition_posterior
from clusterednb.logistic.settings import AUTO, FitSettings, task_tempering
from clusterednb.logistic.solvers.cluster_weighted import (
    WeightedRegressions,
    fit_weighted_regressions,
)
from clusterednb.logistic.solvers.task_deviations import (
    deviation_margin,
    fit_task_deviations,
    log_odds,
)
from clusterednb.logistic.solvers.weighted_newton import WeightedLogistic

OPTIONAL_ARRAYS = ("coclustering", "deviations", "cluster_weights")
FEATURE_ARRAYS = ("feature_relevance", "label_relevance", "label_columns", "differing_columns")
FEATURE_ARRAYS += ("first_label_columns",)
"""The optional arrays of one value per feature (the judgements of relevance)."""
OPTIONAL_ARRAYS += FEATURE_ARRAYS
"""Arrays a model file may lack: the co-clustering of a model of many tasks, the tasks'
deviations of files written before they existed (or of a model without them), the
regressions' task weights of files written before 2026-11-26, and the judgements a fit makes
only with relevance judged."""


@dataclass(frozen=True)
class LogisticClusters:
    """A fitted clustering and its regressions (everything prediction reads).

    Attributes
    ----------
    partition : ndarray of shape (n_tasks,)
    coclustering : ndarray of shape (n_tasks, n_tasks), or None
        None above :data:`~clusterednb.inference.blocks.core_and_place.MAX_SAMPLED_TASKS`
        tasks (not formed).
    n_clusters_probability : ndarray of shape (n_tasks + 1,)
    membership : ndarray of shape (n_tasks, K + 1)
        Each task's mixture over the regressions (the last, pooled one: 0 for known tasks).
    cluster_value_counts : ndarray of shape (K, n_values_total)
        Tempered feature-value counts of the MAP clusters (``Σ_u τ_u n_u``, for new tasks'
        choice of cluster).
    cluster_sizes : ndarray of shape (K,)
    coef : ndarray of shape (K + 1, n_values_total + n_tasks + n_numeric)
    intercept : ndarray of shape (K + 1,)
    log_joint : float
        ``log P(z, D)`` of the partition (tempered block scores plus the CRP prior).
    deviations : ndarray of shape (n_tasks, n_values_total + n_numeric + 1), optional
        Each task's own weights on the shared columns and intercept, added to the mixture's
        log-odds (:mod:`clusterednb.logistic.solvers.task_deviations`); None: none.
    cluster_weights : ndarray of shape (n_tasks, K), optional
        ``q_u(c)``, the posterior's weights of the tasks in each cluster's regression (before
        the floor), kept so that a partial fit can refit the regressions under the same
        posterior (:mod:`clusterednb.logistic.online`); None in files written before them.
    sampled_rows : int
        The rows (labelled or not) the partition posterior was sampled on.
    fitted_rows : int
        The labelled rows every regression was last fitted on (0: not known); a partial fit
        of a few answers refits only their tasks' own weights until the rows added since
        reach :data:`~clusterednb.logistic.online.LOCAL_SHARE` of these.
    feature_relevance : ndarray of shape (n_features,), optional
        With ``relevance``: each feature's judged relevance to the clusters (those below
        one half left out of the joint score and of ``cluster_value_counts``).
    label_relevance : ndarray of shape (n_features,), optional
        With ``relevance``: each feature's judged relevance to the label within clusters
        (:mod:`~clusterednb.logistic.clustering.label_relevance`).
    label_columns : ndarray of shape (n_features,), optional
        1.0 for the features the regressions read, 0.0 for those left out (None: all read).
    differing_columns : ndarray of shape (n_features,), optional
        With ``relevance``: 1.0 for the features whose label weights the partition's score
        let differ between clusters, 0.0 for those it held shared
        (:mod:`~clusterednb.logistic.clustering.shared_slopes`); None: all differ.
    first_label_columns : ndarray of shape (n_features,), optional
        Where the label evidence chose the columns again and the model was fitted again on
        them (:func:`~clusterednb.logistic.label_judgement.fit_tuned`): the first fit's
        ``label_columns`` (1.0 read, 0.0 left out); None: no such second fit.

    Examples
    --------
    >>> data = JointData.from_codes(np.array([[0], [1], [0], [1], [1], [0]]),
    ...     np.array([1, 0, -1, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2]), 3, np.array([0, 2]))
    >>> settings = FitSettings(effective_rows=5.0, floor=1.0)
    >>> clusters = fit_clusters(data, settings, np.random.default_rng(0))
    >>> int(clusters.cluster_sizes.sum()), clusters.membership.shape[1] == clusters.coef.shape[0]
    (3, True)
    """

    partition: np.ndarray
    coclustering: np.ndarray | None
    n_clusters_probability: np.ndarray
    membership: np.ndarray
    cluster_value_counts: np.ndarray
    cluster_sizes: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    log_joint: float
    deviations: np.ndarray | None = None
    cluster_weights: np.ndarray | None = None
    sampled_rows: int = 0
    feature_relevance: np.ndarray | None = None
    fitted_rows: int = 0
    label_relevance: np.ndarray | None = None
    label_columns: np.ndarray | None = None
    differing_columns: np.ndarray | None = None
    first_label_columns: np.ndarray | None = None

    def proba(self, design, mixture: np.ndarray, task: np.ndarray | None = None) -> np.ndarray:
        """``P(y = 1)`` of rows under their mixtures (and their tasks' deviations, if given).

        Parameters
        ----------
        design : sparse matrix of shape (n_rows, n_columns)
            :meth:`~clusterednb.logistic.fit.JointData.design` of the rows
            (task position -1: a new task).
        mixture : ndarray of shape (n_rows, K + 1)
        task : ndarray of shape (n_rows,), optional
            The rows' task positions (-1: a new task, no deviation); None: no deviations.

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> data, clusters = toy.joint_data(), toy.fitted_clusters(floor=1.0)  # the fit above
        >>> rows = np.array([0, 1])
        >>> p1 = clusters.proba(data.design(rows), clusters.membership[data.task[rows]])
        >>> bool(p1[0] > p1[1])  # value 0 came with label 1 in task 0
        True
        """
        p1 = WeightedRegressions(self.coef, self.intercept).proba(design, mixture)
        if task is None or self.deviations is None:
            return p1
        margin = deviation_margin(self.shared_columns(design), task, self.deviations)
        moved = margin != 0.0
        p1[moved] = expit(log_odds(p1[moved]) + margin[moved])
        return p1

    def log_odds_by_feature(
        self,
        codes: np.ndarray,
        schema: FeatureSchema,
        task_index: np.ndarray,
        mixture: np.ndarray,
        numeric_names: tuple[str, ...] = (),
        numbers: np.ndarray | None = None,
    ) -> np.ndarray:
        """Each feature's contribution to the log-odds, shape (n_rows, n_features): its
        value's coefficient averaged over the row's ``mixture`` (n_rows, K + 1), plus the
        task's own deviation, plus a numeric column's slope times its standardised number
        ``numbers`` (n_rows, n_numeric); 0 for a missing value. An explanation, not the
        prediction (:meth:`~clusterednb.ClusteredLogisticRegression.log_odds_by_feature`)."""
        n_values, n_tasks = schema.n_values_total, self.membership.shape[0]
        known = task_index >= 0
        row_task = np.maximum(task_index, 0)
        out = np.zeros((codes.shape[0], schema.n_features))
        for f in range(schema.n_features):
            column = schema.offsets[f] + np.maximum(codes[:, f], 0)
            contribution = np.einsum("rk,kr->r", mixture, self.coef[:, column])
            if self.deviations is not None:
                contribution += np.where(known, self.deviations[row_task, column], 0.0)
            out[:, f] = np.where(codes[:, f] >= 0, contribution, 0.0)
        for j, name in enumerate(numeric_names):
            slope = mixture @ self.coef[:, n_values + n_tasks + j]
            if self.deviations is not None:
                slope = slope + np.where(known, self.deviations[row_task, n_values + j], 0.0)
            out[:, schema.feature_names.index(name)] += slope * numbers[:, j]
        return out

    def shared_columns(self, design):
        """The columns of a regression design that every task shares (all but the task's
        one-hot), sparse of shape (n_rows, n_values_total + n_numeric).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> data, clusters = toy.joint_data(), toy.fitted_clusters()  # 2 values, 3 tasks
        >>> clusters.shared_columns(data.design(np.array([0]))).toarray().tolist()
        [[1.0, 0.0]]
        """
        first = self.cluster_value_counts.shape[1]
        after = first + self.membership.shape[0]
        design = sparse.csc_matrix(design)
        return sparse.hstack([design[:, :first], design[:, after:]], format="csr")

    def with_deviations(
        self, data: JointData, variance: float, tasks: np.ndarray | None = None
    ) -> LogisticClusters:
        """These clusters with each task's deviation fitted on its labelled rows of ``data``
        (prior variance ``variance``; only ``tasks`` if given; 0: none).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> data, clusters = toy.joint_data(), toy.fitted_clusters()
        >>> clusters.with_deviations(data, 1.0).deviations.shape  # 3 tasks; 2 values, intercept
        (3, 3)
        >>> clusters.with_deviations(data, 0.0).deviations is None
        True
        """
        if variance <= 0:
            return replace(self, deviations=None)
        rows = data.labelled
        design = data.design(rows)
        offset = log_odds(self.proba(design, self.membership[data.task[rows]]))
        deviations = fit_task_deviations(
            self.shared_columns(design),
            data.y[rows],
            data.task[rows],
            offset,
            variance,
            data.n_tasks,
            tasks,
        )
        return replace(self, deviations=deviations)

    @classmethod
    def from_arrays(
        cls,
        arrays: dict[str, np.ndarray],
        log_joint: float,
        n_tasks: int,
        schema: FeatureSchema,
        n_numeric: int = 0,
        sampled_rows: int = 0,
        fitted_rows: int = 0,
    ) -> LogisticClusters:
        """Rebuild from saved arrays, refusing any whose shape contradicts the others
        (``deviations`` may be absent: files written before tasks had deviations;
        ``coclustering`` too: a model of more tasks than are sampled).

        Examples
        --------
        >>> from clusterednb.examples import logistic as toy
        >>> clusters = toy.fitted_clusters()  # the fit above
        >>> arrays = {name: getattr(clusters, name) for name in (
        ...     "partition", "coclustering", "n_clusters_probability", "membership",
        ...     "cluster_value_counts", "cluster_sizes", "coef", "intercept")}
        >>> schema = FeatureSchema(("f",), ((0, 1),), (0, 1))  # one feature of two values
        >>> again = LogisticClusters.from_arrays(arrays, clusters.log_joint, 3, schema)
        >>> bool(np.array_equal(again.coef, clusters.coef))
        True
        """
        missing = [n for n, a in arrays.items() if a is None and n not in OPTIONAL_ARRAYS]
        if missing:
            raise CNBError(f"the model file lacks the arrays {missing}")
        n_clusters = arrays["cluster_sizes"].shape[0]
        expected = {
            "partition": (n_tasks,),
            "coclustering": (n_tasks, n_tasks),
            "n_clusters_probability": (n_tasks + 1,),
            "membership": (n_tasks, n_clusters + 1),
            "cluster_value_counts": (n_clusters, schema.n_values_total),
            "cluster_sizes": (n_clusters,),
            "coef": (n_clusters + 1, schema.n_values_total + n_tasks + n_numeric),
            "intercept": (n_clusters + 1,),
        }
        if arrays.get("coclustering") is None:
            del expected["coclustering"]
            arrays = {**arrays, "coclustering": None}
        if arrays.get("deviations") is not None:
            expected["deviations"] = (n_tasks, schema.n_values_total + n_numeric + 1)
        if arrays.get("cluster_weights") is not None:
            expected["cluster_weights"] = (n_tasks, n_clusters)
        for name in FEATURE_ARRAYS:
            if arrays.get(name) is not None:
                expected[name] = (schema.n_features,)
        for name, shape in expected.items():
            if arrays[name].shape != shape:
                raise CNBError(f"array {name!r} has shape {arrays[name].shape}, expected {shape}")
            if not np.isfinite(arrays[name]).all():
                raise CNBError(f"array {name!r} holds values that are not finite")
        if n_tasks and (arrays["partition"].min() < 0 or arrays["partition"].max() >= n_clusters):
            raise CNBError("array 'partition' names clusters that do not exist")
        return cls(
            **arrays,
            log_joint=log_joint,
            sampled_rows=int(sampled_rows),
            fitted_rows=int(fitted_rows),
        )


def labelled_regression(
    data: JointData, settings: FitSettings, tol: float = 1e-8
) -> WeightedLogistic:
    """The regression problem of ``data``'s labelled rows (design, labels, penalty ``C``; a
    numeric column's bins ``settings.bin_precision`` times as much: :func:`design_precision`),
    solved to Newton decrement ``tol``.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data = toy.joint_data()  # 3 tasks of 2 rows, one unlabelled
    >>> labelled_regression(data, FitSettings()).with_bias.shape  # 2 values, 3 tasks, bias
    (5, 6)
    """
    rows = data.labelled
    first_task_column = int(data.offsets[-1])
    return WeightedLogistic(
        data.design(rows),
        data.y[rows],
        settings.C,
        task_columns=slice(first_task_column, first_task_column + data.n_tasks),
        tol=tol,
        column_precision=design_precision(data, settings.bin_precision),
    )


def design_precision(data: JointData, bin_precision: float) -> np.ndarray:
    """Each column of ``data``'s regression design's prior precision in units of ``1 / C``: a
    numeric feature's bins ``bin_precision`` (its number is also read raw, with precision 1),
    every other column 1; shape (n_values_total + n_tasks + n_numeric,).

    Examples
    --------
    >>> data = JointData.from_codes(np.array([[0, 1], [1, 0]]), np.array([1, 0]),
    ...     np.array([0, 1]), 2, np.array([0, 2, 4]), numeric=np.array([[0.5], [-0.5]]),
    ...     numeric_features=np.array([1]))
    >>> design_precision(data, 4.0).tolist()  # 2 values, 2 bins, 2 tasks, 1 number
    [1.0, 1.0, 4.0, 4.0, 1.0, 1.0, 1.0]
    """
    if bin_precision == AUTO:
        raise CNBError("bin_precision is 'auto': choose it before fitting the regressions")
    precision = np.ones(int(data.offsets[-1]) + data.n_tasks + data.numeric.shape[1])
    if data.numeric_features is not None and not data.documents:
        for feature in data.numeric_features:
            precision[data.offsets[feature] : data.offsets[feature + 1]] = bin_precision
    return precision


def assemble(
    data: JointData,
    clustering: BlockClustering,
    settings: FitSettings,
    regression: WeightedLogistic | None = None,
    near: LogisticClusters | None = None,
    for_tasks: np.ndarray | None = None,
) -> LogisticClusters:
    """The cluster-weighted regressions of a clustering, and what prediction needs of it.

    ``regression`` is :func:`labelled_regression` of ``data`` when already built (tuning
    assembles many clusterings on the same rows); ``near``, the same clustering's regressions
    at another floor, to start from (the minima are the same); ``for_tasks``, task positions:
    only the regressions their membership gives a weight are fitted (the others hold the
    pooled regression, unfitted), which predicts those tasks' rows exactly as a full assembly
    does.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data = toy.joint_data()  # 3 tasks of 2 rows, one unlabelled
    >>> settings = FitSettings(effective_rows=5.0, floor=1.0)
    >>> clustering = partition_posterior(data, settings, np.random.default_rng(0))
    >>> clusters = assemble(data, clustering, settings)
    >>> clusters.coef.shape[1], clusters.membership.sum(axis=1).round(12).tolist()
    (5, [1.0, 1.0, 1.0])
    """
    q = clustering.membership
    if q is None:
        q = membership(clustering.coclustering, clustering.partition)
    if regression is None:
        regression = labelled_regression(data, settings)
        if near is not None:  # the same rows and more: its pooled fit starts near
            regression.pooled_start = np.append(near.coef[-1], near.intercept[-1])
    regressions = fit_weighted_regressions(
        regression,
        data.task[data.labelled],
        q,
        float(settings.floor),
        None if near is None else np.column_stack([near.coef, near.intercept])[:-1],
        None if for_tasks is None else np.any(q[for_tasks] > 0, axis=0),
    )
    n_clusters = q.shape[1]
    indicator = np.eye(n_clusters, dtype=np.int64)[clustering.partition]
    relevance = clustering.feature_relevance
    kept = 1.0 if relevance is None else kept_values(relevance, data.offsets)
    return LogisticClusters(
        partition=clustering.partition,
        coclustering=clustering.coclustering,
        n_clusters_probability=clustering.n_clusters_probability,
        membership=np.column_stack([q / q.sum(axis=1, keepdims=True), np.zeros(data.n_tasks)]),
        cluster_value_counts=indicator.T
        @ (
            data.value_counts
            * task_tempering(data.rows_per_task, float(settings.effective_rows))[:, None]
            * kept
        ),
        cluster_sizes=indicator.sum(axis=0),
        coef=regressions.coef,
        intercept=regressions.intercept,
        log_joint=clustering.log_joint,
        cluster_weights=q,
        sampled_rows=int(data.y.size),
        fitted_rows=int(data.labelled.size),
        feature_relevance=relevance,
        differing_columns=_as_float(clustering.differing_columns),
    )


def fit_clusters(
    data: JointData,
    settings: FitSettings,
    rng: np.random.Generator,
    relevance: np.ndarray | None = None,
    differing: np.ndarray | None = None,
) -> LogisticClusters:
    """Partition posterior, then the regressions, then the tasks' deviations
    (``effective_rows``, ``floor`` and ``deviation_scale`` fixed; with ``settings.relevance``,
    ``relevance`` (n_features,) is the features' judged relevance, or None to judge it here;
    ``differing`` (n_features,) the features whose label weights differ between clusters,
    None: all; :func:`~clusterednb.logistic.partition.partition_posterior`).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> clusters = fit_clusters(toy.joint_data(), FitSettings(effective_rows=5.0, floor=0.2),
    ...                         np.random.default_rng(0))
    >>> clusters.partition.shape, clusters.intercept.shape == (clusters.cluster_sizes.size + 1,)
    ((3,), True)
    """
    clustering = partition_posterior(data, settings, rng, relevance, differing)
    clusters = assemble(data, clustering, settings)
    return clusters.with_deviations(data, settings.deviation_variance)


def _as_float(columns: np.ndarray | None) -> np.ndarray | None:
    """Bool columns as the 1.0/0.0 a model file keeps (None stays None)."""
    return None if columns is None else np.asarray(columns, dtype=np.float64)
