"""Gradient-boosted trees started from the clustered regressions: one LightGBM booster over
every labelled row, whose first score for a row is the log-odds that the clusters' own
regressions give it.

:class:`~clusterednb.ClusteredLogisticRegression` already says, for every row, what its task's
clusters expect; the booster learns only what they miss (interactions, thresholds, the shape
of a number), pooled over all tasks, so

    logit P(y = 1 | x, task) = logit P_regressions(y = 1 | x, task) + F(x)

with ``F`` the booster's raw score (LightGBM's ``init_score`` during the fit). One booster
costs what a pooled LightGBM costs, where a learner inside each cluster
(:class:`~clusterednb.learners.estimator.ClusteredLearner`) costs one per cluster, and a blend
chosen on held-out rows two fits of everything.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit

from clusterednb.estimation.decisions import check_fitted, check_new_tasks
from clusterednb.estimation.prediction_rows import PredictionRows
from clusterednb.estimation.training_table import split_tasks
from clusterednb.exceptions import CNBError, check_choice
from clusterednb.learners.cluster_fits import ClusterLearners
from clusterednb.learners.estimator import ClusteredLearner
from clusterednb.learners.regression_share import clipped_logit
from clusterednb.learners.saved_learners import restored_learners
from clusterednb.learners.tables import make_learner, matrix_codes, take_rows
from clusterednb.logistic.estimator import ClusteredLogisticRegression
from clusterednb.persistence.state import ModelRecord
from clusterednb.stats.task_auc import mean_task_auc

START_CHOICES = ("regressions", "auto")
BOOSTER_FLOOR = 0.05
"""The floor of the booster's clustering unless ``clustering_params`` gives one: the tuning
then walks ``effective_rows`` alone. Its trees correct the regressions over every row, so the
floors' walk (up to the pooled regression) gained them nothing: the same AUC to the last digit
at k = 16 and 64 on landmine and on issue 49's population with ten rows a user, within
0.0021 elsewhere (landmine, MovieLens, the survey, the organisation), for 8 % of the fit
(BENCHMARKS.md, "A number's slope in the partition's score")."""


class ClusteredBoosting(ClusteredLearner):
    """Multi-task classification by the clustered logistic regression, corrected by one
    LightGBM booster fitted on every task's rows from the regressions' log-odds.

    Parameters
    ----------
    learner_params : dict, optional
        Parameters of LightGBM's ``LGBMClassifier`` (default: LightGBM's defaults, one thread,
        ``random_state`` drawn from ``random_state``).
    with_task : bool, default=False
        The booster also reads each row's task as a categorical column.
    clustering_params : dict, optional
        Parameters of the :class:`~clusterednb.ClusteredLogisticRegression` (e.g.
        ``{"relevance": True}``, ``{"numeric": ["hour"]}``, ``{"task_column": "user"}``);
        unless they say otherwise its ``floor`` is :data:`BOOSTER_FLOOR` and its
        ``bin_precision`` 4.
    stop_share : float, default=0.0
        In ``[0, 1)``: the share of the labelled rows held out, at random, to choose the
        number of trees (at most ``n_estimators``: the fit stops after 20 trees that do not
        lower the held-out rows' log-loss); the booster is then fitted on every row with that
        many trees. 0: ``n_estimators`` trees.
    start : {"regressions", "auto"}, default="regressions"
        Where the booster starts. "auto": from the regressions unless trees alone rank the
        rows the clustering's tuning held out better than its regressions did (a LightGBM
        fitted on the other labelled rows against ``validation_proba_``, by the mean AUC of
        the held tasks: the evaluation's measure); then from nothing, as a pooled LightGBM.
        It costs one more LightGBM fit. Without a tuning (settings given, or chosen on a
        subset of the tasks) the regressions.
    random_state : int or numpy.random.Generator, optional

    Attributes
    ----------
    clustering_ : ClusteredLogisticRegression
        The fitted clustering and its regressions.
    booster_ : lightgbm.Booster
        The booster of the regressions' residual log-odds.
    start_ : str
        "regressions", or "none" when ``start="auto"`` chose trees alone.
    classes_, task_ids_, feature_names_in_ : ndarray
    partition_ : ndarray of shape (n_tasks,)

    Examples
    --------
    >>> from clusterednb.examples import naive_bayes as toy
    >>> X, y, tasks = toy.colour_rows()
    >>> model = ClusteredBoosting({"n_estimators": 5}, random_state=0).fit(X, y, tasks)
    >>> model.predict_proba([["red"]], ["ann"]).shape
    (1, 2)
    """

    learner = "lightgbm"
    thin_below = 0.0
    regression_share = 0.0
    clustering_defaults = (*ClusteredLearner.clustering_defaults, ("floor", BOOSTER_FLOOR))

    def __init__(
        self,
        learner_params: dict[str, Any] | None = None,
        with_task: bool = False,
        clustering_params: dict[str, Any] | None = None,
        stop_share: float = 0.0,
        start: str = "regressions",
        random_state: Any = None,
    ) -> None:
        self.learner_params = learner_params
        self.with_task = with_task
        self.clustering_params = clustering_params
        self.stop_share = stop_share
        self.start = start
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None) -> Any:
        """Cluster the tasks, then fit the booster from the regressions' log-odds.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)
            A missing label marks an unlabelled row (it helps the clustering only).
        tasks : array-like of shape (n_rows,), optional
        """
        if not 0.0 <= self.stop_share < 1.0:
            raise CNBError(f"stop_share must be in [0, 1), got {self.stop_share!r}")
        check_choice("start", self.start, START_CHOICES)
        self.start_ = "regressions"
        return super().fit(X, y, tasks, sample_weight)

    def _fit_learners(self, clustering: ClusteredLogisticRegression, rng: Any) -> None:
        """Fit the booster on every kept labelled row from the regressions' log-odds (also
        after ``partial_fit``, under the clustering as it now is)."""
        matrix, row_task, y = self.rows_
        if y.size == 0 or y.min() == y.max():
            raise CNBError("the booster needs labelled rows of both classes")
        seed = int(rng.integers(2**31 - 1))
        self.number_edges_ = {}  # LightGBM bins numbers itself
        self._choose_paired(clustering)
        frame = self._frame(clustering, matrix, row_task)
        if self.start == "auto" and self._fit_rows is not None:  # a fit, not a partial_fit
            self.start_ = self._chosen_start(clustering, frame, y, seed)
        start = np.zeros(y.size)
        if self.start_ == "regressions":
            start = regression_log_odds(clustering, matrix, row_task)
        params = dict(self.learner_params or {})
        if self.stop_share > 0.0:
            params["n_estimators"] = self._trees_before_stopping(frame, y, start, seed, rng)
        model = make_learner("lightgbm", params, seed)
        model.fit(frame, y, init_score=start)
        self.booster_ = model.booster_
        self._set_fitted(clustering, ClusterLearners([self.booster_], np.ones(1)))

    def _chosen_start(
        self, clustering: ClusteredLogisticRegression, frame: Any, y: np.ndarray, seed: int
    ) -> str:
        """Start from nothing ("none") when a LightGBM fitted on the labelled rows the tuning
        kept ranks the rows it held out better than the tuned regressions did (mean AUC over
        the held tasks with both classes, the evaluation's measure; a tie keeps the
        regressions)."""
        held_x = np.asarray(clustering.validation_rows_, dtype=np.int64)
        fit_rows = self._fit_rows
        held = np.searchsorted(fit_rows, held_x)
        inside = np.minimum(held, max(fit_rows.size - 1, 0))
        if held.size == 0 or not np.array_equal(fit_rows[inside], held_x):
            return "regressions"  # no tuning, or rows that rows_ does not hold
        others = np.setdiff1d(np.arange(y.size), held)
        if np.unique(y[others]).size < 2:
            return "regressions"
        trees = make_learner("lightgbm", self.learner_params, seed)
        trees.fit(take_rows(frame, others), y[others])
        p1 = trees.predict_proba(take_rows(frame, held))[:, 1]
        task = self.rows_[1][held]
        regressions = mean_task_auc(y[held], clustering.validation_proba_, task)
        return "none" if mean_task_auc(y[held], p1, task) > regressions else "regressions"

    def _trees_before_stopping(
        self, frame: Any, y: np.ndarray, start: np.ndarray, seed: int, rng: Any
    ) -> int:
        """The number of trees after which the log-loss of a random ``stop_share`` of the
        rows, held out of a fit on the others, stopped falling (20 rounds without a fall)."""
        import lightgbm

        held = rng.random(y.size) < self.stop_share
        fit, out = np.flatnonzero(~held), np.flatnonzero(held)
        if out.size == 0 or np.unique(y[fit]).size < 2:
            return int((self.learner_params or {}).get("n_estimators", 100))
        model = make_learner("lightgbm", self.learner_params, seed)
        held_rows = (take_rows(frame, out), y[out])
        newer = "eval_X" in inspect.signature(model.fit).parameters  # LightGBM ≥ 4.6
        evaluation = (
            {"eval_X": (held_rows[0],), "eval_y": (held_rows[1],)}
            if newer
            else {"eval_set": [held_rows]}
        )
        model.fit(
            take_rows(frame, fit),
            y[fit],
            init_score=start[fit],
            eval_init_score=[start[out]],
            callbacks=[lightgbm.early_stopping(20, verbose=False)],
            **evaluation,
        )
        return max(int(model.best_iteration_ or 0), 1)

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """``P(y | x)``: shape (n_rows, 2) in ``classes_`` order; the regressions' log-odds
        (a new task placed by its rows' features, ``new_tasks`` as
        :meth:`ClusteredLogisticRegression.predict_proba` reads it) plus the booster's raw
        score.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredBoosting({"n_estimators": 5}, random_state=0)
        >>> proba = model.fit(*toy.colour_rows()).predict_proba([["red"]] * 2, ["ann", "new"])
        >>> bool(np.allclose(proba.sum(axis=1), 1.0))
        True
        """
        check_fitted(self, "booster_")
        check_new_tasks(new_tasks)
        clustering = self.clustering_
        rows = clustering._prediction_rows(*split_tasks(X, tasks, clustering.task_column))
        frame = self._frame(clustering, self._matrix_of(rows), rows.task_index)
        raw = np.asarray(self.booster_.predict(frame, raw_score=True), dtype=np.float64)
        if self.start_ == "regressions":
            raw += clipped_logit(clustering._proba_of(rows, new_tasks)[:, 1])
        p1 = expit(raw)
        return np.column_stack([1.0 - p1, p1])

    def log_odds_by_feature(self, X: Any, tasks: Any = None) -> pd.DataFrame:
        """Each feature's contribution to the log-odds of ``classes_[1]``, row by row: its
        contribution in the regressions
        (:meth:`ClusteredLogisticRegression.log_odds_by_feature`) plus its exact share of the
        booster's raw score (TreeSHAP, LightGBM's ``pred_contrib``; the booster's expected
        score and the task column's share are not a feature's).

        Returns
        -------
        DataFrame of shape (n_rows, n_features)

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredBoosting({"n_estimators": 5}, random_state=0)
        >>> model.fit(*toy.colour_rows()).log_odds_by_feature([["red"]], ["ann"]).shape
        (1, 1)
        """
        check_fitted(self, "booster_")
        if self.clustering_.observation != "categorical":
            raise CNBError("log_odds_by_feature explains tables, not documents")
        names = list(self.feature_names_in_)
        regressions = self.clustering_.log_odds_by_feature(X, tasks)[names]
        return regressions + self.booster_contributions(X, tasks)

    def booster_contributions(self, X: Any, tasks: Any = None) -> pd.DataFrame:
        """Each feature's TreeSHAP share of the booster's raw score, shape (n_rows,
        n_features); with the expected score (and the task column's share) they sum to it. A
        column the booster does not read (left out of the regressions, :meth:`_frame`) has none."""
        frame = self._frame(self.clustering_, *self._encoded(X, tasks, None)[:2])
        shares = np.asarray(self.booster_.predict(frame, pred_contrib=True), dtype=np.float64)
        names = list(self.feature_names_in_)
        read = [name for name in names if name in frame.columns]
        out = pd.DataFrame(np.zeros((shares.shape[0], len(names))), columns=names)
        out[read] = shares[:, : len(read)]
        return out

    # ------------------------------------------------------------------ persistence
    def fit_summary(self) -> dict[str, Any]:
        """What the fit found: the clustering's summary and the booster's size.

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredBoosting({"n_estimators": 5}, random_state=0)
        >>> summary = model.fit(*toy.colour_rows()).fit_summary()
        >>> summary["learner"], 1 <= summary["trees"] <= 5  # LightGBM stops without a split
        ('lightgbm from the regressions', True)
        """
        check_fitted(self, "booster_")
        start = "the regressions" if self.start_ != "none" else "nothing"
        return (
            self.clustering_.fit_summary()
            | self._paired_summary()
            | {
                "learner": f"lightgbm from {start}",
                "with_task": self.with_task,
                "trees": int(self.booster_.num_trees()),
            }
        )

    def _restored_learners(self, record: ModelRecord, n_clusters: int) -> ClusterLearners:
        """The file's booster (one, whatever the number of clusters)."""
        learners = restored_learners(record.meta["learners"], record.arrays, "lightgbm")
        if len(learners.models) != 1 or not hasattr(learners.models[0], "num_trees"):
            raise CNBError("a ClusteredBoosting model file holds one LightGBM booster")
        return learners

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._state()
        return meta | {"start": self.start_}, arrays

    def _restore(self, record: ModelRecord) -> None:
        super()._restore(record)
        self.booster_ = self.learners_.models[0]
        self.start_ = record.meta.get("start", "regressions")  # files before 2026-11-27
        check_choice("the file's start", self.start_, ("regressions", "none"))


def regression_log_odds(
    clustering: ClusteredLogisticRegression, matrix: Any, row_task: np.ndarray
) -> np.ndarray:
    """The clusters' regressions' log-odds of kept rows (their task's own mixture), shape
    (n_rows,): what :meth:`ClusteredLogisticRegression.predict_proba` gives the rows as read,
    from their codes (:func:`~clusterednb.learners.tables.matrix_codes`) without reading the
    values again.

    Parameters
    ----------
    clustering : ClusteredLogisticRegression
        Fitted.
    matrix : ndarray of shape (n_rows, n_features) or sparse matrix
        :func:`~clusterednb.learners.tables.encoded_matrix` of the rows.
    row_task : ndarray of shape (n_rows,)
        Each row's task position in ``clustering.task_ids_``.
    """
    row_task = np.asarray(row_task, dtype=np.int64)
    if sparse.issparse(matrix):
        codes, numbers = matrix, None
    else:
        codes, numbers = matrix_codes(matrix, clustering.schema_, clustering.numeric_.names)
    rows = PredictionRows(codes, numbers, clustering.task_ids_[row_task], row_task)
    return clipped_logit(clustering._proba_of(rows, "pooled")[:, 1])
