"""The estimator shell every multi-task naive-Bayes model shares.

``fit`` = validate and encode the rows (:mod:`clusterednb.naive_bayes.training_data`) → per-task
:class:`~clusterednb.stats.counts.Counts` → the subclass's engine (``_infer``) → a
:class:`~clusterednb.inference.posterior.Posterior`; ``predict_*`` = encode → the Posterior
(:mod:`clusterednb.naive_bayes.predictions`). Unlabelled rows go through
:mod:`clusterednb.naive_bayes.semi_supervised`; ``save`` through
:mod:`clusterednb.persistence.saving` and the saved state through
:mod:`clusterednb.persistence.state`. Everything model-specific lives in the subclass.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from clusterednb.data.schema import FeatureSchema
from clusterednb.estimation.decisions import (
    BayesDecisions,
    check_fitted,
    refuse_sample_weight,
    relevance_summary,
)
from clusterednb.estimation.training_table import split_tasks
from clusterednb.exceptions import CNBError, check_choice
from clusterednb.inference.posterior import Posterior
from clusterednb.models import label_prior
from clusterednb.models.document_events import OBSERVATIONS
from clusterednb.models.observation import DirichletNB
from clusterednb.naive_bayes import semi_supervised, training_data
from clusterednb.naive_bayes.predictions import PredictsFromPosterior
from clusterednb.persistence.saving import SavesAsPlainData
from clusterednb.persistence.state import ModelRecord, base_state, restore_base
from clusterednb.seeding import as_generator
from clusterednb.stats.counts import Counts

_FITTED_DATA = ("schema_", "task_ids_", "counts_", "unlabelled_X_", "unlabelled_task_")


class TaskNaiveBayes(
    PredictsFromPosterior,
    SavesAsPlainData,
    semi_supervised.UsesUnlabelledRows,
    BayesDecisions,
    BaseEstimator,
):
    """Shared machinery of the multi-task naive-Bayes estimators.

    Subclasses implement :meth:`_infer`, turning per-task counts into a
    :class:`~clusterednb.inference.posterior.Posterior` and a log evidence.

    Parameters
    ----------
    alpha : float, array-like of shape (n_classes,) or "auto", default=1.0
        Label pseudo-counts ``α`` (per task). "auto": the ``α`` that maximises the labels'
        evidence over the training tasks (:mod:`clusterednb.models.label_prior`), so that a task
        with few labels starts from the population's label rate; calibrates the
        probabilities, leaves the partition posterior unchanged.
    beta : float or array-like, default=1.0
        Feature pseudo-counts ``β``: scalar, (n_features,), (n_values_total,) or
        (n_classes, n_values_total).
    schema : FeatureSchema, optional
        Fixed schema; by default inferred from the training data, grown by ``partial_fit``.
    classes : sequence, optional
        Declared label values, when the training data may not show all of them.
    handle_unknown : {"warn", "error", "ignore"}, default="warn"
        A category never seen in training counts as missing; "warn" reports how many
        (:class:`~clusterednb.exceptions.UnknownCategoryWarning`), "error" raises.
    task_column : str, optional
        When ``tasks`` is not passed, take the task ids from this column of ``X``.
    semi_supervised : {False, "gibbs", "em", "auto", True}, default=False
        Unlabelled rows (label NaN/None) are kept and: unused (False), Gibbs-sampled
        (``"gibbs"``/True; ``n_iter`` sweeps kept after ``n_iter // 4``), used by EM (``"em"``,
        ``n_iter`` iterations at most), or Gibbs when present (``"auto"``).
        ``log_evidence_`` is always the labelled rows'.
    n_iter : int, default=100
    random_state : int, numpy.random.Generator or None
        Seed of the Gibbs sampler over missing labels.
    observation : {"categorical", "bernoulli", "multinomial"}, default="categorical"
        One category per feature, or a document–word count matrix (dense, DataFrame or
        sparse, never densified): words present/absent, or counts (:mod:`clusterednb.data.text`).
    numeric : "auto", sequence of str or None, default="auto"
        Columns read as numbers and cut into ``n_bins`` quantile bins of the training rows
        (the edges are kept in the schema and saved with the model). "auto": every column
        of numbers that are not all whole, and every column of whole numbers with more than 20
        distinct values
        (:func:`~clusterednb.data.numeric.is_numeric_column`); None or []: every column is
        categories; a list names the columns.
    n_bins : int, default=10
        Bins per numeric column (fewer where quantiles tie).

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> isinstance(NoSharingNB().fit(*toy.colour_rows()), TaskNaiveBayes)  # every model's shell
    True
    """

    evidence_kind_: ClassVar[str] = "exact"

    def __init__(
        self,
        alpha: Any = 1.0,
        beta: Any = 1.0,
        schema: FeatureSchema | None = None,
        classes: Any = None,
        handle_unknown: str = "warn",
        task_column: str | None = None,
        semi_supervised: bool | str = False,
        n_iter: int = 100,
        random_state: int | np.random.Generator | None = None,
        observation: str = "categorical",
        numeric: Any = "auto",
        n_bins: int = 10,
    ) -> None:
        self.alpha = alpha
        self.beta = beta
        self.schema = schema
        self.classes = classes
        self.handle_unknown = handle_unknown
        self.task_column = task_column
        self.semi_supervised = semi_supervised
        self.n_iter = n_iter
        self.random_state = random_state
        self.observation = observation
        self.numeric = numeric
        self.n_bins = n_bins

    def __sklearn_tags__(self) -> Any:
        """scikit-learn tags: categorical and string values and missing values are accepted."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = tags.input_tags.string = tags.input_tags.categorical = True
        tags.input_tags.sparse = self.observation != "categorical"
        return tags

    def fit(self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None) -> TaskNaiveBayes:
        """Fit on the rows of many tasks.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
            Raw feature values; NaN or None is a missing value (marginalised out).
        y : array-like of shape (n_rows,)
            Labels; NaN or None marks an unlabelled row (used as ``semi_supervised`` says).
        tasks : array-like of shape (n_rows,)
            Task (user) id of each row, any hashable type.
        sample_weight : None
            Refused if given (a clear error): the models count rows; repeat or drop rows.

        Returns
        -------
        self

        Examples
        --------
        >>> from clusterednb import NoSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> model = NoSharingNB().fit(*toy.colour_rows())
        >>> model.classes_.tolist(), model.task_ids_.tolist()
        (['no', 'yes'], ['ann', 'bob', 'cy'])
        """
        refuse_sample_weight(sample_weight)
        self._forget_fit()
        return self.partial_fit(X, y, tasks)

    def _forget_fit(self) -> None:
        """Drop every fitted attribute (names ending in ``_``)."""
        for attribute in [a for a in vars(self) if a.endswith("_")]:
            delattr(self, attribute)

    def partial_fit(
        self, X: Any, y: Any, tasks: Any = None, classes: Any = None, sample_weight: Any = None
    ) -> TaskNaiveBayes:
        """Add rows (of known or new tasks); counts add, so chunks ≡ one fit.

        ``classes`` declares the label values on the first call (as in scikit-learn).

        Examples
        --------
        >>> from clusterednb import CompleteSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> X, y, tasks = toy.colour_rows()
        >>> chunks = CompleteSharingNB().partial_fit(X[:4], y[:4], tasks[:4])
        >>> chunks = chunks.partial_fit(X[4:], y[4:], tasks[4:])
        >>> whole = CompleteSharingNB().fit(X, y, tasks)
        >>> bool(np.allclose(chunks.predict_proba(X, tasks), whole.predict_proba(X, tasks)))
        True
        """
        refuse_sample_weight(sample_weight)
        if self.observation != "categorical":  # documents: settings first (rows: per value)
            self._check_settings()
        X, tasks = split_tasks(X, tasks, self.task_column)
        held = self._held()
        declared = classes if classes is not None else self.classes
        context = training_data.Context(held, self.schema, declared, self._takes_sparse_counts())
        reading = training_data.Reading(
            self.observation,
            self.handle_unknown,
            self.semi_supervised,
            getattr(self, "transductive", None) == "select",
            type(self).__name__,
            getattr(self, "numeric", None),
            getattr(self, "n_bins", 10),
        )
        n_words = self.n_words_ if held else None
        chunk = training_data.training_chunk(X, y, tasks, context, reading, n_words)
        self._hold_and_infer(training_data.merge(held, chunk)[0])
        return self

    def fit_counts(self, counts: Counts, task_ids: Any, schema: FeatureSchema) -> TaskNaiveBayes:
        """Fit from per-task counts computed elsewhere (e.g. by a distributed engine);
        equivalent to :meth:`fit` on the labelled rows the counts came from.

        Examples
        --------
        >>> from clusterednb import NoSharingNB
        >>> from clusterednb.examples import models as toy
        >>> model = NoSharingNB().fit_counts(toy.three_task_counts(), ["a", "b", "c"],
        ...                                  toy.colour_schema())
        >>> model.predict_proba([["red"]], ["c"]).round(12).tolist()  # 1/4·1/2 : 3/4·1/4
        [[0.4, 0.6]]
        """
        self._forget_fit()
        chunk = training_data.counts_chunk(counts, task_ids, schema)
        self._hold_and_infer(training_data.merge(None, chunk)[0])
        return self

    def _held(self) -> training_data.Chunk | None:
        if not hasattr(self, "schema_"):
            return None
        return training_data.Chunk(*(getattr(self, name) for name in _FITTED_DATA))

    def _hold_and_infer(self, held: training_data.Chunk) -> None:
        """Hold the merged data and infer the posterior from it."""
        for name, value in zip(_FITTED_DATA, vars(held).values(), strict=True):
            setattr(self, name, value)
        self._set_schema_attributes()
        for attribute in ("unlabelled_proba_", "em_objective_", "label_samples_"):
            if hasattr(self, attribute):
                delattr(self, attribute)
        mode = self._semi_supervised_mode()
        infer = {"em": self._infer_em, "gibbs": self._infer_gibbs}.get(mode, self._infer)
        self.posterior_, self.log_evidence_ = infer(self.observation_, self.counts_)

    @property
    def n_words_(self) -> int:
        """Vocabulary size of a document model.

        Examples
        --------
        >>> from clusterednb import NoSharingNB  # below: 3 documents over 3 words
        >>> NoSharingNB(observation="bernoulli").fit(np.eye(3), ["a", "b", "a"], ["u"] * 3).n_words_
        3
        """
        if self.observation == "bernoulli":
            return self.schema_.n_features
        return self.schema_.n_values_total

    def _check_settings(self) -> None:
        check_shell_settings(self)

    def _takes_sparse_counts(self) -> bool:
        """Whether the inference reads per-task counts kept sparse (for many tasks)."""
        return False

    def _semi_supervised_mode(self) -> str | None:
        return semi_supervised.mode(self.semi_supervised, self.unlabelled_X_.shape[0])

    def _rng(self) -> np.random.Generator:
        return as_generator(self.random_state)

    def _set_schema_attributes(self) -> None:
        """Attributes that follow from ``schema_`` and the hyperparameters."""
        check_shell_settings(self)
        self.classes_ = np.asarray(self.schema_.classes)
        multinomial = self.observation == "multinomial"
        names = self.schema_.categories[0] if multinomial else self.schema_.feature_names
        self.n_features_in_ = len(names)
        self.feature_names_in_ = np.asarray(names, dtype=object)
        alpha = label_prior.resolve(self.alpha, self.counts_.label_counts)
        self.observation_ = OBSERVATIONS[self.observation](self.schema_, alpha, self.beta)
        self.alpha_ = self.observation_.alpha

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        raise NotImplementedError

    def fit_summary(self) -> dict[str, Any]:
        """What the fit found, as plain values (``cnb fit`` reports it): the number of tasks,
        the log evidence and its kind, and with feature relevance each column's.

        Examples
        --------
        >>> from clusterednb import CompleteSharingNB
        >>> from clusterednb.examples import naive_bayes as toy
        >>> CompleteSharingNB().fit(*toy.colour_rows()).fit_summary()  # doctest: +ELLIPSIS
        {'tasks': 3, 'log_evidence': -14.228..., 'evidence_kind': 'exact'}
        """
        check_fitted(self, "posterior_")
        summary = {
            "tasks": int(self.task_ids_.size),
            "log_evidence": float(self.log_evidence_),
            "evidence_kind": self.evidence_kind_,
        }
        return summary | relevance_summary(self)

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return base_state(self)

    def _restore(self, record: ModelRecord) -> None:
        """Set the fitted state from a model file's record, checking that its parts fit."""
        self._check_settings()
        restore_base(self, record)
        self._set_schema_attributes()


def check_shell_settings(estimator: TaskNaiveBayes) -> None:
    """Raise :class:`CNBError` naming a hyperparameter of the shell outside its allowed values
    (subclasses check their own on top).

    Examples
    --------
    >>> from clusterednb import NoSharingNB
    >>> check_shell_settings(NoSharingNB(handle_unknown="drop"))
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.CNBError: handle_unknown ... got 'drop'
    """
    allowed = {
        "semi_supervised": semi_supervised.SEMI_SUPERVISED,
        "observation": tuple(OBSERVATIONS),
        "handle_unknown": ("warn", "error", "ignore"),
    }
    for name, values in allowed.items():
        check_choice(name, getattr(estimator, name), values)
    n_iter = estimator.n_iter
    if isinstance(n_iter, bool) or not (isinstance(n_iter, int) and n_iter >= 1):
        raise CNBError(f"n_iter must be a positive integer, got {n_iter!r}")
