"""Any classifier inside the clusters: the clustered logistic regression's clustering of the
tasks, and in each cluster a learner of your choice (gradient-boosted trees by default)
fitted on every task's rows weighted by how likely the task shares the cluster.

The clustering is :class:`~clusterednb.ClusteredLogisticRegression` (its partition posterior,
its tuned floor, its placement of new tasks); the learners replace its predicting regressions
(:mod:`clusterednb.learners.cluster_fits`). A row of task ``v`` is predicted by the mixture
``Σ_c π_v(c) P_c(y | x)`` with ``π_v`` the task's membership.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator

from clusterednb.estimation.decisions import (
    BayesDecisions,
    check_fitted,
    check_new_tasks,
    refuse_sample_weight,
)
from clusterednb.estimation.prediction_rows import PredictionRows
from clusterednb.estimation.training_table import split_tasks
from clusterednb.exceptions import CNBError
from clusterednb.learners.cluster_fits import ClusterLearners, fit_cluster_learners
from clusterednb.learners.regression_share import blended, clipped_logit, held_out_share
from clusterednb.learners.saved_learners import (
    arrays_under,
    learner_name,
    matrix_arrays,
    matrix_of,
    restored_learners,
    saved_learners,
)
from clusterednb.learners.tables import (
    binned_numbers,
    encoded_matrix,
    learner_frame,
    make_learner,
    number_thresholds,
    rows_of,
    stacked,
)
from clusterednb.learners.tree_columns import paired_columns, restored_paired
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.persistence.saving import SavesAsPlainData
from clusterednb.persistence.state import ModelRecord
from clusterednb.seeding import as_generator

CLUSTERING_PREFIX = "clustering/"
"""The prefix of the clustering's arrays in a model file."""
LEARNERS_BIN_PRECISION = 4.0
"""The bins' prior of the clustering's regressions beside trees, unless
``clustering_params`` gives one: trees bend the numbers themselves, so the walk of
``bin_precision="auto"`` would only cost (landmine's booster: within its standard error of
4 at every k, and 13 % dearer; BENCHMARKS.md, "The bins' prior chosen on held rows")."""
EDGES_PREFIX = "number_edges/"
"""The prefix of the numeric columns' bin edges (by column position) in a model file."""


class ClusteredLearner(SavesAsPlainData, BayesDecisions, BaseEstimator):
    """Multi-task classification by any learner inside clusters of similar tasks.

    Parameters
    ----------
    learner : {"hgb", "lightgbm"} or classifier, default="hgb"
        The learner inside each cluster: scikit-learn's ``HistGradientBoostingClassifier``,
        LightGBM's ``LGBMClassifier`` (the extra ``[trees]``), or any scikit-learn classifier
        whose ``fit`` takes ``sample_weight`` and that reads missing values (NaN) and
        pandas categories (cloned for each cluster).
    learner_params : dict, optional
        Parameters of a learner named by a string (default: the library's defaults, with
        ``random_state`` drawn from ``random_state``).
    with_task : bool, default=False
        The learners also read each row's task as a categorical column (each task its own
        effect where the trees find one).
    thin_below : float, default=0.0
        In ``[0, 1)``: rows whose weight in a cluster's learner is below it are kept with
        probability ``weight / thin_below`` at weight ``thin_below`` (cheaper learners, the
        same expected weights; :mod:`clusterednb.learners.cluster_fits`); 0: every row.
    clustering_params : dict, optional
        Parameters of the :class:`~clusterednb.ClusteredLogisticRegression` that clusters the
        tasks (e.g. ``{"relevance": True}``, ``{"numeric": ["hour"]}``, ``{"task_column":
        "user"}``); tables only. Its ``bin_precision`` is 4 unless given
        (:data:`LEARNERS_BIN_PRECISION`).
    regression_share : float or "auto", default=0.0
        In ``[0, 1]``: the share of the clustering's own regressions in the prediction's
        log-odds, the learners' the rest (0: the learners alone; 1: the regressions alone,
        a :class:`~clusterednb.ClusteredLogisticRegression`); "auto" chooses it on held-out
        rows of the training tasks (:mod:`clusterednb.learners.regression_share`; one more
        fit of the clustering and the learners, on the other rows).
    random_state : int or numpy.random.Generator, optional

    Attributes
    ----------
    clustering_ : ClusteredLogisticRegression
        The fitted clustering (``partition_``, ``coclustering_``, ``floor_`` …).
    learners_ : ClusterLearners
        One learner per cluster of ``partition_``
        (:mod:`clusterednb.learners.cluster_fits`).
    classes_, task_ids_, feature_names_in_ : ndarray
    partition_ : ndarray of shape (n_tasks,)
    regression_share_ : float
        The share used (``regression_share``, or the one chosen).

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> X, y, tasks = toy.colour_rows()
    >>> model = ClusteredLearner(learner_params={"max_iter": 20}, random_state=0)
    >>> model = model.fit(X, y, tasks)
    >>> model.partition_.tolist(), len(model.learners_.models)
    ([0, 0, 1], 2)
    >>> model.predict_proba([["red"]], ["ann"]).shape
    (1, 2)
    """

    clustering_defaults: tuple[tuple[str, Any], ...] = (("bin_precision", LEARNERS_BIN_PRECISION),)
    """The clustering's parameters unless ``clustering_params`` gives them."""

    def __init__(
        self,
        learner: Any = "hgb",
        learner_params: dict[str, Any] | None = None,
        with_task: bool = False,
        thin_below: float = 0.0,
        clustering_params: dict[str, Any] | None = None,
        regression_share: float | str = 0.0,
        random_state: Any = None,
    ) -> None:
        self.learner = learner
        self.learner_params = learner_params
        self.with_task = with_task
        self.thin_below = thin_below
        self.clustering_params = clustering_params
        self.regression_share = regression_share
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None) -> ClusteredLearner:
        """Cluster the tasks, then fit each cluster's learner on the labelled rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)
            A missing label marks an unlabelled row (it helps the clustering only).
        tasks : array-like of shape (n_rows,), optional

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLearner(learner_params={"max_iter": 5}, random_state=0)
        >>> model.fit(*toy.colour_rows()).fit_summary()["learner"]
        'hgb'
        """
        refuse_sample_weight(sample_weight)
        make_learner(self.learner, self.learner_params, 0)  # a bad learner fails first
        if not 0.0 <= self.thin_below < 1.0:
            raise CNBError(f"thin_below must be in [0, 1), got {self.thin_below!r}")
        share = self.regression_share
        number = isinstance(share, int | float) and not isinstance(share, bool)
        if share != "auto" and not (number and 0.0 <= share <= 1.0):
            raise CNBError(f"regression_share must be in [0, 1] or 'auto', got {share!r}")
        rng = as_generator(self.random_state)
        clustering = self._new_clustering(rng)
        clustering.fit(X, y, tasks)
        X, tasks = split_tasks(X, tasks, clustering.task_column)
        self._keep_rows(clustering, X, y, tasks, None)
        self._fit_learners(clustering, rng)
        self.regression_share_ = self._chosen_share(X, y, tasks, rng)
        return self

    def _chosen_share(self, X: Any, y: Any, tasks: Any, rng: np.random.Generator) -> float:
        """``regression_share``, or the share chosen on held-out rows by a fit of ``inner``
        (the same learner, the clustering's settings fixed) on the others."""
        if self.regression_share != "auto":
            return float(self.regression_share)
        clustering = self.clustering_
        fixed = {
            "effective_rows": clustering.effective_rows_,
            "floor": clustering.floor_,
            "deviation_scale": clustering.deviation_scale_,
            "classes": list(clustering.classes_),
        }
        params = {k: v for k, v in (self.clustering_params or {}).items() if k != "task_column"}
        inner = ClusteredLearner(
            self.learner,
            self.learner_params,
            self.with_task,
            self.thin_below,
            params | fixed,
            regression_share=0.0,
            random_state=rng,
        )
        task_index = clustering._prediction_rows(X, tasks).task_index
        return held_out_share(inner, X, y, tasks, task_index, clustering, rng)

    def partial_fit(
        self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None
    ) -> ClusteredLearner:
        """Learn from more rows (the first call fits): the clustering's own ``partial_fit``
        (:meth:`ClusteredLogisticRegression.partial_fit`), then every cluster's learner is
        fitted again on all the labelled rows kept (trees cannot add rows to a fitted model).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> X, y, tasks = toy.colour_rows()
        >>> model = ClusteredLearner(learner_params={"max_iter": 5}, random_state=0)
        >>> model = model.fit(X[:6], y[:6], tasks[:6]).partial_fit(X[6:], y[6:], tasks[6:])
        >>> model.task_ids_.tolist(), model.rows_y_.size
        (['ann', 'bob', 'cy'], 9)
        """
        refuse_sample_weight(sample_weight)
        if not hasattr(self, "learners_"):
            return self.fit(X, y, tasks)
        clustering = self.clustering_.partial_fit(X, y, tasks)
        X, tasks = split_tasks(X, tasks, clustering.task_column)
        self._keep_rows(clustering, X, y, tasks, self.rows_)
        self._fit_learners(clustering, as_generator(self.random_state))
        return self

    def _new_clustering(self, rng: np.random.Generator) -> ClusteredLogisticRegression:
        params = dict(self.clustering_params or {})
        if params.get("observation", "categorical") != "categorical" and self.learner == "hgb":
            raise CNBError(
                "scikit-learn's trees take no sparse word counts: for documents use "
                "learner='lightgbm' or a classifier that reads sparse matrices"
            )
        if "random_state" in params:
            raise CNBError("set random_state on the ClusteredLearner, not in clustering_params")
        for name, value in self.clustering_defaults:
            params.setdefault(name, value)
        return ClusteredLogisticRegression(**params, random_state=rng)

    def _keep_rows(
        self,
        clustering: ClusteredLogisticRegression,
        X: Any,
        y: Any,
        tasks: Any,
        held: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> None:
        """Encode the labelled rows and add them to those kept (``rows_``)."""
        rows = clustering._prediction_rows(X, tasks)
        codes = clustering.schema_.encode_labels(y)  # as the clustering read them; -1 missing
        labelled = np.flatnonzero(codes >= 0)
        positive = (codes[labelled] == 1).astype(np.int8)
        matrix = encoded_matrix(
            rows.codes[labelled],
            rows_of(rows.frame, labelled),
            clustering.schema_,
            clustering.numeric_.names,
        )
        new = (matrix, rows.task_index[labelled], positive)
        self._fit_rows = labelled if held is None else None  # the rows of X that rows_ holds
        if held is not None:
            new = tuple(stacked(old, part) for old, part in zip(held, new, strict=True))
        self.rows_ = new
        self.rows_y_ = new[2]

    def _fit_learners(self, clustering: ClusteredLogisticRegression, rng: Any) -> None:
        matrix, row_task, y = self.rows_
        if y.size == 0 or y.min() == y.max():
            raise CNBError("the learners need labelled rows of both classes")
        self._choose_paired(clustering)
        seed = int(rng.integers(2**31 - 1))
        clusters = clustering.clusters_
        self.number_edges_ = self._number_edges(clustering, matrix)
        learners = fit_cluster_learners(
            lambda: make_learner(self.learner, self.learner_params, seed),
            self._frame(clustering, matrix, row_task),
            y,
            row_task,
            clusters.cluster_weights,
            clustering.floor_,
            rng,
            self.thin_below,
        )
        self._set_fitted(clustering, learners)

    def _choose_paired(self, clustering: ClusteredLogisticRegression) -> None:
        """``paired_columns_``: the columns the clustering's first fit read and its evidence
        left out that the learners still read (None: no second fit)."""
        matrix, row_task, y = self.rows_
        dense = not sparse.issparse(matrix)
        self.paired_columns_ = paired_columns(clustering, matrix, row_task, y) if dense else None

    def _set_fitted(
        self, clustering: ClusteredLogisticRegression, learners: ClusterLearners
    ) -> None:
        self.clustering_ = clustering
        self.learners_ = learners
        self.schema_ = clustering.schema_
        self.classes_ = clustering.classes_
        self.task_ids_ = clustering.task_ids_
        self.partition_ = clustering.partition_
        self.feature_names_in_ = clustering.feature_names_in_
        self.n_features_in_ = clustering.n_features_in_

    def _number_edges(self, clustering: Any, matrix: np.ndarray) -> dict[int, np.ndarray]:
        """The numeric columns' bins for trees named by a string (none for an estimator)."""
        if not isinstance(self.learner, str) or sparse.issparse(matrix):
            return {}
        names = clustering.numeric_.names
        return number_thresholds(
            matrix, [i for i, name in enumerate(clustering.schema_.feature_names) if name in names]
        )

    def _frame(self, clustering: Any, matrix: np.ndarray, task_index: np.ndarray) -> pd.DataFrame:
        """The rows as the learners read them (:func:`learner_frame`) but the columns the
        regressions left out (``columns_left_out_``): trees on them fit noise (BENCHMARKS.md,
        eighteenth part). Where the label evidence fitted the clustering again, a column
        its first fit read that pairs with a kept one is read too (``paired_columns_``,
        :mod:`~clusterednb.learners.tree_columns`): the evidence of additive regressions
        leaves out a column that acts only with another, as both of an XOR."""
        frame = learner_frame(
            binned_numbers(matrix, self.number_edges_),
            clustering.schema_,
            clustering.numeric_.names,
            task_index if self.with_task else None,
            clustering.task_ids_.size,
        )
        left_out = list(getattr(clustering, "columns_left_out_", ()))
        first = getattr(clustering, "columns_first_left_out_", None)
        if first is not None:  # the first fit's that pair (files before 2026-12-02: all)
            paired = getattr(self, "paired_columns_", None)
            still_read = set(left_out) - set(first) if paired is None else set(paired)
            left_out = [name for name in left_out if name not in still_read]
        if left_out and isinstance(frame, pd.DataFrame):
            frame = frame.drop(columns=left_out)
        return frame

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """``P(y | x)``: shape (n_rows, 2) in ``classes_`` order.

        A task seen in training mixes its clusters' learners by its membership; a new task's
        rows choose among the clusters by their features, as the clustering places them
        (``new_tasks``: all its rows together, "pooled", or "each-row"; a new cluster mixes
        every cluster's learner by the clusters' sizes).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLearner(learner_params={"max_iter": 5}, random_state=0)
        >>> model = model.fit(*toy.colour_rows())
        >>> proba = model.predict_proba([["red"], ["red"]], ["ann", "a new one"])
        >>> proba.shape, bool(np.allclose(proba.sum(axis=1), 1.0))
        ((2, 2), True)
        """
        check_fitted(self, "learners_")
        check_new_tasks(new_tasks)
        frame, mixture = self._rows(X, tasks, new_tasks)
        p1 = self.learners_.proba(frame, mixture)
        share = getattr(self, "regression_share_", 0.0)
        if share > 0.0:
            p_regressions = self.clustering_.predict_proba(X, tasks, new_tasks)[:, 1]
            p1 = blended(p_regressions, p1, share)
        return np.column_stack([1.0 - p1, p1])

    def _rows(self, X: Any, tasks: Any, new_tasks: str) -> tuple[pd.DataFrame, np.ndarray]:
        """The rows as the learners read them, and their mixtures over the learners."""
        matrix, task_index, mixture = self._encoded(X, tasks, new_tasks)
        return self._frame(self.clustering_, matrix, task_index), mixture

    def _encoded(self, X: Any, tasks: Any, new_tasks: str | None) -> tuple[Any, ...]:
        """:func:`encoded_matrix` of the rows, task positions, mixtures (None: none placed)."""
        clustering = self.clustering_
        rows = clustering._prediction_rows(*split_tasks(X, tasks, clustering.task_column))
        codes, index, values = rows.codes, rows.task_index, rows.task_values
        mixture = (
            None if new_tasks is None else clustering._mixture(codes, values, index, new_tasks)
        )
        return self._matrix_of(rows), index, mixture

    def _matrix_of(self, rows: PredictionRows) -> Any:
        """:func:`encoded_matrix` of rows the clustering encoded."""
        clustering = self.clustering_
        return encoded_matrix(rows.codes, rows.frame, clustering.schema_, clustering.numeric_.names)

    def log_odds_by_feature(self, X: Any, tasks: Any = None) -> pd.DataFrame:
        """Each feature's contribution to the log-odds of ``classes_[1]``, row by row: how
        much the log-odds fall when the row's value of that feature is hidden (read as
        missing, as the learners read a missing value). Tree ensembles have no coefficients;
        this occlusion explains any learner. A missing value gives 0. With a
        ``regression_share_`` ``s > 0`` the blend's contributions are ``s`` times the
        regressions' own (:meth:`ClusteredLogisticRegression.log_odds_by_feature`) plus
        ``1 − s`` times the learners' occlusion.

        Returns
        -------
        DataFrame of shape (n_rows, n_features)

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLearner(learner_params={"max_iter": 5}, random_state=0)
        >>> model = model.fit(*toy.colour_rows())
        >>> model.log_odds_by_feature([["red"], [None]], ["ann", "ann"]).shape
        (2, 1)
        """
        check_fitted(self, "learners_")
        if self.clustering_.observation != "categorical":
            raise CNBError("log_odds_by_feature explains tables, not documents")
        matrix, task_index, mixture = self._encoded(X, tasks, "pooled")

        def log_odds(values: np.ndarray) -> np.ndarray:
            frame = self._frame(self.clustering_, values, task_index)
            return clipped_logit(self.learners_.proba(frame, mixture))

        full = log_odds(matrix)
        out = {}
        for position, name in enumerate(self.feature_names_in_):
            hidden = matrix.copy()
            hidden[:, position] = np.nan
            missing = np.isnan(matrix[:, position])
            out[name] = np.where(missing, 0.0, full - log_odds(hidden))
        occlusion = pd.DataFrame(out)
        share = getattr(self, "regression_share_", 0.0)
        if share == 0.0:
            return occlusion
        regressions = self.clustering_.log_odds_by_feature(X, tasks)[occlusion.columns]
        return share * regressions + (1.0 - share) * occlusion

    # ------------------------------------------------------------------ persistence
    def fit_summary(self) -> dict[str, Any]:
        """What the fit found, as plain values: the clustering's summary and the learner.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLearner(learner_params={"max_iter": 5}, random_state=0)
        >>> summary = model.fit(*toy.colour_rows()).fit_summary()
        >>> summary["tasks"], summary["clusters"], summary["learner"]
        (3, 2, 'hgb')
        """
        check_fitted(self, "learners_")
        summary = self.clustering_.fit_summary() | self._paired_summary()
        return summary | {
            "learner": learner_name(self.learner),
            "with_task": self.with_task,
            "regression_share": self.regression_share_,
        }

    def _paired_summary(self) -> dict[str, Any]:
        """``columns_paired`` (the left-out columns the learners still read) where judged."""
        paired = getattr(self, "paired_columns_", None)
        return {} if paired is None else {"columns_paired": list(paired)}

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = saved_learners(self.learners_, self.learner)
        clustering_meta, clustering_arrays = self.clustering_._state()
        arrays |= {CLUSTERING_PREFIX + name: a for name, a in clustering_arrays.items()}
        matrix, row_task, y = self.rows_
        arrays |= matrix_arrays(matrix) | {"rows_task": row_task, "rows_y": y}
        arrays |= {f"{EDGES_PREFIX}{i}": cuts for i, cuts in self.number_edges_.items()}
        meta = {"learners": meta, "clustering": clustering_meta}
        paired = getattr(self, "paired_columns_", None)
        return meta | {"regression_share": self.regression_share_, "paired_columns": paired}, arrays

    def _restore(self, record: ModelRecord) -> None:
        clustering = self._new_clustering(as_generator(None))
        clustering.random_state = None
        inner = arrays_under(record.arrays, CLUSTERING_PREFIX)
        clustering._restore(
            ModelRecord(record.schema, record.task_ids, record.meta["clustering"], inner)
        )
        learners = self._restored_learners(record, int(clustering.partition_.max()) + 1)
        arrays = record.arrays
        self.rows_ = (matrix_of(arrays), arrays["rows_task"], arrays["rows_y"])
        self.number_edges_ = {int(i): c for i, c in arrays_under(arrays, EDGES_PREFIX).items()}
        self.rows_y_ = self.rows_[2]
        self.regression_share_ = float(record.meta.get("regression_share", 0.0))
        self.paired_columns_ = restored_paired(record.meta.get("paired_columns"))
        if not 0.0 <= self.regression_share_ <= 1.0:
            raise CNBError(f"regression_share {self.regression_share_} is not in [0, 1]")
        self._set_fitted(clustering, learners)

    def _restored_learners(self, record: ModelRecord, n_clusters: int) -> ClusterLearners:
        """The file's learners, one per cluster."""
        learners = restored_learners(record.meta["learners"], record.arrays, self.learner)
        if len(learners.models) != n_clusters or learners.new_cluster.shape != (n_clusters,):
            raise CNBError(f"{len(learners.models)} learners for {n_clusters} clusters")
        return learners
