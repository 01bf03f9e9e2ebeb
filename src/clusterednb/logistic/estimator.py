"""Clustered logistic regression: a Dirichlet-process mixture over tasks whose clusters model
the features and the labels jointly, predicting by cluster-weighted pooled regressions.

The partition prior is the Chinese restaurant process (concentration ``γ``); a cluster's
likelihood is :class:`~clusterednb.logistic.clustering.joint_blocks.JointLogisticBlocks` (naive
Bayes of the features, Laplace-approximated logistic regression of the labels, tempered by
``τ``); the partition posterior comes from enumeration or Gibbs sampling
(:mod:`clusterednb.inference.blocks.engine`); prediction is
:mod:`clusterednb.logistic.solvers.cluster_weighted`. ``effective_rows="auto"`` and
``floor="auto"`` are chosen on the training tasks alone (:mod:`clusterednb.logistic.tuning`);
:meth:`~ClusteredLogisticRegression.partial_fit` is :mod:`clusterednb.logistic.online`.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from clusterednb.data.encode import HANDLE_UNKNOWN
from clusterednb.data.numeric import NumericColumns
from clusterednb.data.schema import FeatureSchema
from clusterednb.estimation.decisions import (
    BayesDecisions,
    check_fitted,
    check_new_tasks,
    refuse_sample_weight,
    relevance_summary,
)
from clusterednb.estimation.prediction_rows import PredictionRows, prediction_rows
from clusterednb.estimation.training_table import split_tasks
from clusterednb.exceptions import CNBError, check_choice
from clusterednb.logistic.clusters import LogisticClusters
from clusterednb.logistic.inputs import (
    check_observation,
    prediction_design,
    rows_added,
    training_rows,
)
from clusterednb.logistic.label_judgement import fit_tuned, set_judged_attributes
from clusterednb.logistic.model_state import (
    restored_clusters,
    restored_numeric,
    restored_rows,
    restored_settings,
    saved_state,
)
from clusterednb.logistic.online import partial_update
from clusterednb.logistic.placement import rows_mixture
from clusterednb.logistic.relevance_gate import resolved_relevance
from clusterednb.logistic.settings import AUTO, FitSettings, resolved_chain
from clusterednb.persistence.saving import SavesAsPlainData
from clusterednb.persistence.state import ModelRecord
from clusterednb.seeding import as_generator


class ClusteredLogisticRegression(SavesAsPlainData, BayesDecisions, BaseEstimator):
    """Multi-task logistic regression that shares rows between tasks of the same cluster.

    Parameters
    ----------
    gamma : float, default=1.0
        Concentration of the Dirichlet process over partitions of the tasks.
    effective_rows : float or "auto", default="auto"
        ``R > 0``: each task's likelihood in the clustering is raised to ``min(1, R / n_u)``
        (``n_u`` its rows), so no task counts as more than ``R`` rows (``inf``: no tempering);
        "auto" chooses it on the training tasks (held-out labelled rows, see ``validation``;
        never the rows predicted later).
    floor : float or "auto", default="auto"
        Weight in ``[0, 1]`` of the rows of tasks outside a cluster; "auto" as ``effective_rows``.
    beta : float, default=1.0
        Dirichlet pseudo-count of each feature value in the clusters' feature model.
    precision : float, default=1.0
        Prior precision of the clusters' logistic weights in the partition posterior.
    C : float, default=1.0
        Inverse L2 penalty of the predicting regressions (as scikit-learn's).
    bin_precision : float or "auto", default="auto"
        How many times ``1 / C`` the penalty on a numeric column's bin weights is: the
        regressions read a number raw and as its bins, and the bins correct its slope
        rather than fit a second one (1: as every other weight, as before 2026-11-28).
        "auto" chooses it among 1, 4, … 256 on the tuning's held rows, after
        ``effective_rows`` (:func:`~clusterednb.logistic.tuning.bins_walked`); 4 where nothing is
        tuned.
    inference : {"auto", "exact", "gibbs"}, default="auto"
        Enumerate every partition ("exact", at most 10 tasks) or sample them ("gibbs");
        "auto" enumerates up to 8 tasks.
    n_sweeps, burn_in : int or "auto", default="auto"
        Gibbs sweeps, and those discarded before averaging; "auto": 30, a third of them
        burn-in (four times as many where the median task has under 8 labelled rows).
    validation : {"like-fewest", "half"}, default="like-fewest"
        How "auto" holds rows out: most of the labelled rows of a third of the tasks, each cut
        down to look like the task with the fewest labels (tuning for the users with few
        labels), or half the labelled rows of every task; :mod:`clusterednb.logistic.tuning`
        (why "like-fewest" is the default: docs/decisions.md).
    deviation_scale : float or "auto", default=0.0
        ``s ≥ 0``: each task seen in training adds its own weights on the shared columns and
        its own intercept to the clusters' log-odds, learnt from its labels under the prior
        ``N(0, s² C)`` (:mod:`clusterednb.logistic.solvers.task_deviations`); 0: none. "auto"
        chooses it as ``effective_rows`` (after them), 0 unless a scale predicts the held rows
        better. Off by default (why: docs/decisions.md).
    schema : FeatureSchema, optional
        Fixed categories and classes instead of those the training rows show (its binned
        columns are categories; no number is standardised).
    classes : sequence, optional
        The two labels (default: those seen, sorted); the second is the positive class.
    handle_unknown : {"warn", "error", "ignore"}, default="warn"
        A category not seen in training: warn and treat as missing, refuse, or ignore.
    task_column : str, optional
        Read the tasks from this column of ``X`` when ``tasks`` is not passed.
    numeric : "auto", sequence of str or None, default="auto"
        Columns of ``X`` that hold numbers. The clustering and the one-hot part of the
        regressions see them as ``n_bins`` quantile bins of the training rows; the regressions
        also read each as a standardised number (a missing value counts as the training
        mean). "auto": columns of numbers not all whole, or whole with over 20 distinct values
        (:func:`~clusterednb.data.numeric.is_numeric_column`); None or []: none.
    n_bins : int, default=5
        Bins per numeric column (fewer where quantiles tie).
    observation : {"categorical", "multinomial"}, default="categorical"
        What a row is: categorical (and numeric) columns, or a document's word counts
        (``X`` a document–term matrix, sparse or dense, or a DataFrame whose columns name the
        words). For documents the clusters' feature model is the multinomial event model,
        the regressions read the word counts, and the clustering's label model regresses the
        label on each document's coordinates along the documents' 16 leading SVD directions
        (:mod:`clusterednb.logistic.documents`).
    random_state : int or numpy.random.Generator, optional
    relevance : bool or "auto", default="auto"
        Tables: a column judged irrelevant to the clusters on its counts leaves the joint
        score (:mod:`clusterednb.logistic.clustering.feature_relevance`); one irrelevant to
        the label in the tuned clusters leaves the regressions where held-out rows are then
        clearly better predicted, and the clusters ignore the features where that is clearer
        still (:mod:`clusterednb.logistic.clustering.label_relevance`); one whose label
        weights the fit's clusters do not tell apart is held shared by them in the
        partition's score where the held-out rows are then better predicted
        (:mod:`clusterednb.logistic.clustering.shared_slopes`). "auto": judged only
        where columns alike in every task hold 5 % of the features' likelihood, else as
        False, to the last digit (:mod:`clusterednb.logistic.relevance_gate`; documents: False).
    column_evidence : bool, default=True
        With relevance judged: after the fit, the columns are chosen again by the evidence of
        its clusters' labels, and the model fitted again on those where they differ
        (:mod:`clusterednb.logistic.clustering.column_evidence`). Additive: a column that acts
        only with another is left out of the regressions (the trees of ``ClusteredLearner``
        still read the columns the first fit read).

    Attributes
    ----------
    classes_, task_ids_ : ndarray of shape (2,), (n_tasks,)
    partition_ : ndarray of shape (n_tasks,)
        The best partition found (clusters numbered by first appearance).
    coclustering_ : ndarray of shape (n_tasks, n_tasks), or None
        ``P(u and v share a cluster | D)``; None above 300 tasks (the partition sampled on 300,
        the others placed: :mod:`clusterednb.inference.blocks.core_and_place`).
    n_clusters_probability_ : ndarray of shape (n_tasks + 1,)
    effective_rows_, floor_, deviation_scale_, bin_precision_ : float
        The values used.
    tuning_ : DataFrame
        With "auto": the held-out log-loss of every setting the tuning's walk tried
        (:mod:`clusterednb.logistic.tuning`; empty otherwise).
    validation_rows_ : ndarray of shape (n_held,)
        The rows of the last ``fit``'s ``X`` whose labels its tuning held out; their
        ``validation_proba_`` under the chosen clusters, ``validation_log_loss_`` its mean:
        an honest score (empty and NaN without a tuning, or one on a subset of the tasks).
    numeric_ : NumericColumns
        The numeric columns' names, training means and scales.
    feature_relevance_, label_relevance_ : ndarray of shape (n_features,)
        When judged: each column's relevance to the clusters and to the label
        within them, aligned with ``feature_names_in_``; ``columns_left_out_``, the names of
        the columns the regressions do not read; ``label_weights_shared_``, those whose label
        weights the partition's score held shared by every cluster
        (:mod:`clusterednb.logistic.clustering.shared_slopes`); where the label evidence
        fitted again (``column_evidence``), ``columns_first_left_out_``, those the first
        fit's regressions did not read.

    Examples
    --------
    >>> import numpy as np
    >>> from clusterednb.data.synthetic import make_logistic_population
    >>> population = make_logistic_population(np.random.default_rng(0), group_sizes=(3, 3))
    >>> frame = population.frame
    >>> model = ClusteredLogisticRegression(random_state=0)
    >>> model = model.fit(frame[population.feature_names], frame["label"], frame["task"])
    >>> model.partition_.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> model.predict_proba(frame[population.feature_names][:2], ["u0", "u0"]).shape
    (2, 2)
    """

    def __init__(
        self,
        gamma: float = 1.0,
        effective_rows: float | str = AUTO,
        floor: float | str = AUTO,
        beta: float = 1.0,
        precision: float = 1.0,
        C: float = 1.0,
        bin_precision: float | str = AUTO,
        inference: str = "auto",
        n_sweeps: int | str = AUTO,
        burn_in: int | str = AUTO,
        validation: str = "like-fewest",
        deviation_scale: float | str = 0.0,
        classes: Any = None,
        schema: FeatureSchema | None = None,
        handle_unknown: str = "warn",
        task_column: str | None = None,
        numeric: Any = "auto",
        n_bins: int = 5,
        observation: str = "categorical",
        random_state: int | np.random.Generator | None = None,
        relevance: bool | str = "auto",
        column_evidence: bool = True,
    ) -> None:
        self.gamma = gamma
        self.effective_rows = effective_rows
        self.floor = floor
        self.beta = beta
        self.precision = precision
        self.C = C
        self.bin_precision = bin_precision
        self.inference = inference
        self.n_sweeps = n_sweeps
        self.burn_in = burn_in
        self.validation = validation
        self.deviation_scale = deviation_scale
        self.classes = classes
        self.schema = schema
        self.handle_unknown = handle_unknown
        self.task_column = task_column
        self.numeric = numeric
        self.n_bins = n_bins
        self.observation = observation
        self.random_state = random_state
        self.relevance = relevance
        self.column_evidence = column_evidence

    def _settings(self) -> FitSettings:
        return FitSettings(**{f.name: getattr(self, f.name) for f in fields(FitSettings)})

    # ------------------------------------------------------------------ fitting
    def fit(
        self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None
    ) -> ClusteredLogisticRegression:
        """Fit on the rows of many tasks (a missing label marks an unlabelled row, whose
        features still tell which cluster its task belongs to).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
            Categorical features (missing values allowed), or with ``observation=
            "multinomial"`` word counts of shape (n_rows, n_words).
        y : array-like of shape (n_rows,)
        tasks : array-like of shape (n_rows,), optional

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLogisticRegression(random_state=0).fit(*toy.colour_rows())
        >>> model.partition_.tolist()  # ann and bob like red; cy likes blue
        [0, 0, 1]
        """
        refuse_sample_weight(sample_weight)
        settings = self._settings()
        settings.check()
        check_choice("handle_unknown", self.handle_unknown, HANDLE_UNKNOWN)
        X, tasks = split_tasks(X, tasks, self.task_column)
        settings_of_rows = (self.observation, self.classes, self.numeric, self.n_bins)
        rows = training_rows(X, y, tasks, *settings_of_rows, type(self).__name__, self.schema)
        rng = as_generator(self.random_state)
        settings = resolved_relevance(resolved_chain(settings, rows.data), rows.data, rng)
        tuning, data, clusters = fit_tuned(rows.data, settings, rng, bool(self.column_evidence))
        chosen, self.tuning_ = tuning.settings, tuning.tried
        self.validation_rows_ = rows.source_rows[tuning.held_rows]
        self.validation_log_loss_, self.validation_proba_ = tuning.held_log_loss, tuning.held_proba
        self._set_fitted(rows.schema, rows.task_ids, clusters, chosen, rows.numeric)
        self.rows_ = data
        return self

    def partial_fit(
        self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None
    ) -> ClusteredLogisticRegression:
        """Learn from more rows: new rows of known tasks, or new tasks (the first call fits).

        The rows are added to the training rows the model keeps, and the regressions are
        fitted again with the settings the first ``fit`` chose (``effective_rows_``,
        ``floor_``, ``deviation_scale_``), from their previous minima; the partition posterior
        is sampled again (a quarter of the sweeps) only for a new task or once the rows added
        since it was sampled reach 5 % (:mod:`clusterednb.logistic.online`).
        The schema stays the first fit's: a category it never saw is missing (as
        ``handle_unknown`` says), a numeric column is cut by its bins. Tables only
        (documents: use ``fit``).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> X, y, tasks = toy.colour_rows()
        >>> model = ClusteredLogisticRegression(random_state=0).fit(X[:6], y[:6], tasks[:6])
        >>> model = model.partial_fit(X[6:], y[6:], tasks[6:])
        >>> model.task_ids_.tolist(), model.rows_.y.size
        (['ann', 'bob', 'cy'], 9)
        """
        refuse_sample_weight(sample_weight)
        if not hasattr(self, "clusters_"):
            return self.fit(X, y, tasks)
        if self.observation != "categorical":
            raise CNBError("partial_fit takes tables; refit a model of documents with fit")
        held = getattr(self, "rows_", None)
        if held is None:  # a file written before partial_fit existed
            raise CNBError("no training rows kept (a fit from Parquet, or an old file): fit again")
        X, tasks = split_tasks(X, tasks, self.task_column)
        data, task_ids = rows_added(
            held, X, y, tasks, self.schema_, self.task_ids_, self.numeric_, self.handle_unknown
        )
        chosen = self._settings_used()
        rng = as_generator(self.random_state)
        clusters = partial_update(self.clusters_, data, chosen, self.task_ids_.size, rng, held)
        self._set_fitted(self.schema_, task_ids, clusters, chosen, self.numeric_)
        self.rows_ = data
        return self

    def _set_fitted(
        self,
        schema: FeatureSchema,
        task_ids: np.ndarray,
        clusters: LogisticClusters,
        settings: FitSettings,
        numeric: NumericColumns,
    ) -> None:
        self.schema_ = schema
        self.numeric_ = numeric
        self.task_ids_ = task_ids
        self.classes_ = np.asarray(schema.classes)
        names = schema.categories[0] if self.observation == "multinomial" else schema.feature_names
        self.n_features_in_ = len(names)
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self.effective_rows_ = float(settings.effective_rows)
        self.floor_ = float(settings.floor)
        self.deviation_scale_ = float(settings.deviation_scale)
        self.bin_precision_ = float(settings.bin_precision)
        self.clusters_ = clusters
        self.partition_ = clusters.partition
        self.coclustering_ = clusters.coclustering
        self.n_clusters_probability_ = clusters.n_clusters_probability
        set_judged_attributes(self, clusters, self.feature_names_in_)

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, X: Any, tasks: Any = None, new_tasks: str = "pooled") -> np.ndarray:
        """``P(y | x)``: shape (n_rows, 2) in ``classes_`` order.

        A task seen in training is predicted by its clusters' regressions; a new task's rows
        first choose among the clusters by their features (the CRP predictive, tempered as a
        training task of as many rows; a new cluster means the pooled regression): all its
        rows together (``new_tasks="pooled"``), or each row alone (``"each-row"``).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLogisticRegression(random_state=0).fit(*toy.colour_rows())
        >>> proba = model.predict_proba([["red"], ["red"]], ["ann", "cy"])  # no, yes
        >>> bool(proba[0, 1] > proba[1, 1])  # red is liked more by ann than by cy
        True
        """
        check_fitted(self, "clusters_")
        check_new_tasks(new_tasks)
        rows = self._prediction_rows(*split_tasks(X, tasks, self.task_column))
        return self._proba_of(rows, new_tasks)

    def _proba_of(self, rows: PredictionRows, new_tasks: str) -> np.ndarray:
        """:meth:`predict_proba` of rows already encoded (:meth:`_prediction_rows`), shape
        (n_rows, 2)."""
        mixture = self._mixture(rows.codes, rows.task_values, rows.task_index, new_tasks)
        n_tasks = self.task_ids_.size
        design = prediction_design(
            rows.codes, rows.frame, self.schema_, rows.task_index, n_tasks, self.numeric_
        )
        p1 = self.clusters_.proba(design, mixture, rows.task_index)
        return np.column_stack([1.0 - p1, p1])

    def _prediction_rows(self, X: Any, tasks: Any) -> PredictionRows:
        """The rows to predict, encoded (``estimation.prediction_rows``)."""
        words = self.schema_.n_values_total if self.observation != "categorical" else None
        who, unknown = type(self).__name__, self.handle_unknown
        return prediction_rows(
            X, tasks, self.schema_, self.task_ids_, who, n_words=words, handle_unknown=unknown
        )

    def _mixture(self, codes: Any, values: Any, index: Any, new_tasks: str) -> np.ndarray:
        """Each row's weights over the regressions (:func:`rows_mixture`)."""
        settings = self._settings_used()
        return rows_mixture(
            self.clusters_, codes, values, index, self.schema_.offsets, settings, new_tasks
        )

    def log_odds_by_feature(self, X: Any, tasks: Any = None) -> pd.DataFrame:
        """Each feature's contribution to the log-odds of ``classes_[1]``, row by row: the
        coefficient of its value (and of its number, for a numeric column) averaged over the
        row's mixture of regressions, plus its task's own deviation. Missing values give 0.

        An explanation, not the prediction: the prediction mixes the regressions'
        probabilities, not their log-odds, and adds the intercepts. Tables only.

        Returns
        -------
        DataFrame of shape (n_rows, n_features)

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLogisticRegression(random_state=0).fit(*toy.colour_rows())
        >>> odds = model.log_odds_by_feature([["red"], ["red"]], ["ann", "cy"])
        >>> bool(odds.loc[0, "colour"] > odds.loc[1, "colour"])  # ann likes red more
        True
        """
        check_fitted(self, "clusters_")
        if self.observation != "categorical":
            raise CNBError("log_odds_by_feature explains tables, not documents")
        rows = self._prediction_rows(*split_tasks(X, tasks, self.task_column))
        codes, frame, task_index = rows.codes, rows.frame, rows.task_index
        mixture = self._mixture(codes, rows.task_values, task_index, "pooled")
        numbers = self.numeric_.transform(frame) if self.numeric_.names else None
        out = self.clusters_.log_odds_by_feature(
            codes, self.schema_, task_index, mixture, self.numeric_.names, numbers
        )
        return pd.DataFrame(out, columns=list(self.schema_.feature_names))

    def _settings_used(self) -> FitSettings:  # relevance judged: the clusters hold its answer
        chosen = self._settings().with_chosen(self.effective_rows_, self.floor_)
        chosen = resolved_chain(chosen, getattr(self, "rows_", None))
        judged = self.clusters_.feature_relevance is not None
        return replace(
            chosen,
            deviation_scale=self.deviation_scale_,
            bin_precision=self.bin_precision_,
            relevance=judged,
        )

    # ------------------------------------------------------------------ persistence
    def fit_summary(self) -> dict[str, Any]:
        """What the fit found, as plain values (``cnb fit`` reports it): the number of tasks
        and clusters, and the settings it chose (``"inf"`` rows: every row weighs fully).

        Examples
        --------
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = ClusteredLogisticRegression(effective_rows=10, floor=0.1, relevance=False,
        ...                                     random_state=0)
        >>> model.fit(*toy.colour_rows()).fit_summary()
        {'tasks': 3, 'clusters': 2, 'effective_rows': 10.0, 'floor': 0.1, 'deviation_scale': 0.0,
         'bin_precision': 4.0}
        """
        check_fitted(self, "clusters_")
        rows = self.effective_rows_
        summary = {
            "tasks": int(self.task_ids_.size),
            "clusters": int(self.partition_.max()) + 1,
            "effective_rows": rows if np.isfinite(rows) else "inf",  # JSON has no inf
            "floor": self.floor_,
            "deviation_scale": self.deviation_scale_,
            "bin_precision": self.bin_precision_,
        }
        return summary | relevance_summary(self)

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        rows = getattr(self, "rows_", None)
        return saved_state(self.clusters_, self.numeric_, rows, self._settings_used())

    def _restore(self, record: ModelRecord) -> None:
        self._settings().check()
        chosen = restored_settings(record, self._settings())
        numeric = restored_numeric(record)
        check_observation(self.observation, record.schema, numeric)
        clusters = restored_clusters(record, numeric)
        self.tuning_, self.validation_rows_, self.validation_proba_ = pd.DataFrame(), [], []
        self.validation_log_loss_ = np.nan
        self._set_fitted(record.schema, record.task_ids, clusters, chosen, numeric)
        self.rows_ = restored_rows(record, len(numeric.names))
