"""Estimators with scikit-learn conventions: No-Sharing and Complete-Sharing naive Bayes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from clusterednb.data.dataset import TaskDataset, factorize_tasks, index_tasks
from clusterednb.data.guards import check_count_size, warn_suspicious_columns
from clusterednb.data.io import as_feature_input
from clusterednb.data.schema import FeatureSchema, as_vector, ordered_unique
from clusterednb.data.text import as_document_term, document_counts, document_schema
from clusterednb.decision import LossMatrix, as_loss_matrix, bayes_decision
from clusterednb.exceptions import CNBError, DataError, NotFittedError, SchemaError
from clusterednb.inference.em import fit_em
from clusterednb.inference.labels import LabelSampler, sweep_with_model
from clusterednb.inference.posterior import Posterior
from clusterednb.observation import OBSERVATIONS, DirichletNB
from clusterednb.persistence import register_estimator, save_model
from clusterednb.stats import Counts

SEMI_SUPERVISED = (False, True, "gibbs", "em", "auto")
_OPTIONAL_ARRAYS = ("unlabelled_proba", "em_objective")


class TaskNaiveBayes(ClassifierMixin, BaseEstimator):
    """Shared machinery of the multi-task naive-Bayes estimators.

    Subclasses implement :meth:`_infer`, turning per-task counts into a
    :class:`~clusterednb.inference.posterior.Posterior` and a log evidence.

    Parameters
    ----------
    alpha : float or array-like of shape (n_classes,), default=1.0
        Label pseudo-counts ``α`` (per task).
    beta : float or array-like, default=1.0
        Feature pseudo-counts ``β``: scalar, (n_features,), (n_values_total,) or
        (n_classes, n_values_total).
    schema : FeatureSchema, optional
        Fixed schema; by default it is inferred from the training data and grows with
        ``partial_fit``.
    classes : sequence, optional
        Declared label values, when the training data may not show all of them.
    handle_unknown : {"warn", "error", "ignore"}, default="warn"
        A category never seen in training is treated as missing; ``"warn"`` reports how many
        in an :class:`~clusterednb.exceptions.UnknownCategoryWarning`, ``"error"`` raises.
    task_column : str, optional
        When ``tasks`` is not passed, take the task ids from this column of ``X`` (for use
        inside scikit-learn pipelines).
    semi_supervised : {False, "gibbs", "em", "auto", True}, default=False
        What the unlabelled training rows (label NaN/None) do. ``False``: nothing (they are
        kept, so a later change of mind needs no refit of the data). ``"gibbs"`` (or
        ``True``): collapsed Gibbs sampling of their labels; the predictive averages over
        ``n_iter`` retained sweeps after ``n_iter // 4`` burn-in. ``"em"``: expectation–
        maximisation for the MAP parameters (:mod:`clusterednb.inference.em`), at most
        ``n_iter`` iterations. ``"auto"``: ``"gibbs"`` when there are unlabelled rows.
        ``log_evidence_`` is always that of the labelled rows.
    n_iter : int, default=100
        EM iterations, or retained Gibbs sweeps over the missing labels.
    random_state : int, numpy.random.Generator or None
        Seed of the Gibbs sampler over missing labels (the only randomness of these models).
    observation : {"categorical", "bernoulli", "multinomial"}, default="categorical"
        ``"categorical"``: ``X`` holds one categorical value per feature. ``"bernoulli"``
        and ``"multinomial"``: ``X`` is a document–term matrix of word counts (dense,
        DataFrame or ``scipy.sparse``, never densified; see :mod:`clusterednb.data.text`)
        over a fixed vocabulary: each word present/absent, or the word counts under a
        Dirichlet over the vocabulary. Unlabelled documents are ignored (semi-supervised
        learning is not available for them yet).
    """

    evidence_kind_: ClassVar[str] = "exact"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_estimator(cls)

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

    def __sklearn_tags__(self) -> Any:
        """scikit-learn tags: categorical and string values and missing values are accepted."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.sparse = self.observation != "categorical"
        return tags

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any, tasks: Any = None) -> TaskNaiveBayes:
        """Fit on labelled rows of many tasks.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
            Raw feature values; NaN or None is a missing value (marginalised out).
        y : array-like of shape (n_rows,)
            Labels; NaN or None marks an unlabelled row (used as ``semi_supervised`` says).
        tasks : array-like of shape (n_rows,)
            Task (user) id of each row, any hashable type.

        Returns
        -------
        self
        """
        self._forget_fit()
        return self.partial_fit(X, y, tasks)

    def _forget_fit(self) -> None:
        """Drop every fitted attribute (names ending in ``_``)."""
        for attribute in [a for a in vars(self) if a.endswith("_")]:
            delattr(self, attribute)

    def partial_fit(self, X: Any, y: Any, tasks: Any = None, classes: Any = None) -> TaskNaiveBayes:
        """Add rows (of known or new tasks) to the fit; counts add, so chunks ≡ one fit.

        Parameters
        ----------
        X, y, tasks
            As in :meth:`fit`.
        classes : sequence, optional
            Label values to declare on the first call (like scikit-learn's ``partial_fit``).

        Returns
        -------
        self
        """
        if self.observation != "categorical":
            return self._partial_fit_documents(X, y, tasks, classes)
        X, tasks = self._split_tasks(X, tasks)
        fitted = hasattr(self, "schema_")
        declared = classes if classes is not None else self.classes
        if self.schema is not None:
            schema = self.schema
        else:
            frame = as_feature_input(
                X, self.schema_.n_features if fitted else None, type(self).__name__
            )
            if len(frame) == 0:
                raise DataError("the data have no rows")
            warn_suspicious_columns(frame)
            schema = (
                self.schema_.extended(frame, y, classes=declared)
                if fitted
                else FeatureSchema.infer(frame, y, classes=declared)
            )
            X = frame
        data = TaskDataset.from_arrays(
            X, y, tasks, schema=schema, handle_unknown=self.handle_unknown
        )
        _check_labels(schema, data.y, fitted)
        check_count_size(schema, data.n_tasks + (self.task_ids_.size if fitted else 0))
        chunk_counts = Counts.from_codes(
            data.X,
            data.y,
            data.task_index,
            n_tasks=data.n_tasks,
            n_classes=schema.n_classes,
            offsets=schema.offsets,
        )
        if fitted:
            position = self._merge(schema, data.task_ids, chunk_counts)
        else:
            self.schema_, self.task_ids_, self.counts_ = schema, data.task_ids, chunk_counts
            position = np.arange(data.n_tasks)
            self.unlabelled_X_ = np.zeros((0, schema.n_features), dtype=np.int32)
            self.unlabelled_task_ = np.zeros(0, dtype=np.int64)
        unlabelled = data.y < 0
        self.unlabelled_X_ = np.concatenate([self.unlabelled_X_, data.X[unlabelled]])
        self.unlabelled_task_ = np.concatenate(
            [self.unlabelled_task_, position[data.task_index[unlabelled]]]
        )
        self._set_fitted_attributes()
        return self

    def fit_counts(self, counts: Counts, task_ids: Any, schema: FeatureSchema) -> TaskNaiveBayes:
        """Fit from per-task counts computed elsewhere (e.g. by a distributed engine).

        Equivalent to :meth:`fit` on the rows the counts came from (their unlabelled rows
        play no part).

        Parameters
        ----------
        counts : Counts with n_tasks groups
            Label counts (n_tasks, n_classes) and value counts (n_tasks, n_classes,
            n_values_total) on ``schema``'s axes.
        task_ids : array-like of shape (n_tasks,)
        schema : FeatureSchema
        """
        self._forget_fit()
        ids = np.empty(len(task_ids), dtype=object)
        ids[:] = list(task_ids)
        expected = (ids.size, schema.n_classes, schema.n_values_total)
        if counts.value_counts.shape != expected:
            raise DataError(
                f"counts have shape {counts.value_counts.shape}, expected {expected} for "
                f"{ids.size} tasks on this schema"
            )
        if (counts.label_counts < 0).any() or (counts.value_counts < 0).any():
            raise DataError("counts must be non-negative")
        self.schema_, self.task_ids_, self.counts_ = schema, ids, counts
        self.unlabelled_X_ = np.zeros((0, schema.n_features), dtype=np.int32)
        self.unlabelled_task_ = np.zeros(0, dtype=np.int64)
        self._set_fitted_attributes()
        return self

    def _partial_fit_documents(self, X: Any, y: Any, tasks: Any, classes: Any) -> TaskNaiveBayes:
        """``partial_fit`` for a document–term matrix (Bernoulli or multinomial events)."""
        if self.observation not in OBSERVATIONS:
            raise CNBError(
                f"observation must be one of {tuple(OBSERVATIONS)}, got {self.observation!r}"
            )
        X, tasks = self._split_tasks(X, tasks)
        fitted = hasattr(self, "schema_")
        words = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
        matrix = as_document_term(X, self.n_words_ if fitted else None)
        labels = as_vector(y)
        task_values = as_vector(tasks)
        if labels.shape != (matrix.shape[0],) or task_values.shape != (matrix.shape[0],):
            raise DataError(
                f"X has {matrix.shape[0]} documents but y has shape {labels.shape} and tasks "
                f"{task_values.shape}"
            )
        if fitted:
            schema = self.schema_
        elif self.schema is not None:
            schema = self.schema
        else:
            declared = classes if classes is not None else self.classes
            found = tuple(declared) if declared is not None else ordered_unique(labels)
            schema = document_schema(
                words or [f"w{j}" for j in range(matrix.shape[1])], found, self.observation
            )
        codes = schema.encode_labels(labels)
        _check_labels(schema, codes, fitted)
        unlabelled = codes < 0
        if unlabelled.any() and self.semi_supervised not in (False, "auto"):
            raise CNBError(
                "semi-supervised learning is not available for documents yet: remove the "
                f"{int(unlabelled.sum())} unlabelled documents or set semi_supervised=False"
            )
        task_index, task_ids = factorize_tasks(task_values)
        chunk = document_counts(
            matrix, codes, task_index, task_ids.size, schema.n_classes, self.observation
        )
        if fitted:
            self._merge(schema, task_ids, chunk)
        else:
            self.schema_, self.task_ids_, self.counts_ = schema, task_ids, chunk
            self.unlabelled_X_ = np.zeros((0, schema.n_features), dtype=np.int32)
            self.unlabelled_task_ = np.zeros(0, dtype=np.int64)
        self._set_fitted_attributes()
        return self

    @property
    def n_words_(self) -> int:
        """Vocabulary size of a document model."""
        if self.observation == "bernoulli":
            return self.schema_.n_features
        return self.schema_.n_values_total

    def _merge(self, schema: FeatureSchema, task_ids: np.ndarray, chunk: Counts) -> np.ndarray:
        """Add a chunk's counts (its schema may have grown); return its tasks' positions."""
        counts = self.counts_
        if schema != self.schema_:
            class_map, value_map = schema.index_maps(self.schema_)
            counts = counts.remap(schema.n_classes, schema.n_values_total, class_map, value_map)
            stored = self.unlabelled_X_
            flat = value_map[np.where(stored >= 0, stored + self.schema_.offsets[:-1], 0)]
            self.unlabelled_X_ = np.where(stored >= 0, flat - schema.offsets[:-1], -1).astype(
                np.int32
            )
        position = index_tasks(task_ids, self.task_ids_)
        new = position < 0
        all_ids = np.concatenate([self.task_ids_, task_ids[new]])
        position[new] = self.task_ids_.size + np.arange(new.sum())
        counts = counts.pad_groups(all_ids.size)
        label_counts, value_counts = counts.label_counts.copy(), counts.value_counts.copy()
        label_counts[position] += chunk.label_counts
        value_counts[position] += chunk.value_counts
        self.schema_, self.task_ids_ = schema, all_ids
        self.counts_ = Counts(label_counts, value_counts)
        return position

    def _set_fitted_attributes(self) -> None:
        self._set_schema_attributes()
        mode = self._semi_supervised_mode()
        for attribute in ("unlabelled_proba_", "em_objective_", "label_samples_"):
            if hasattr(self, attribute):
                delattr(self, attribute)
        if mode == "em":
            self.posterior_, self.log_evidence_ = self._infer_em(self.observation_, self.counts_)
        elif mode == "gibbs":
            self.posterior_, self.log_evidence_ = self._infer_gibbs(self.observation_, self.counts_)
        else:
            self.posterior_, self.log_evidence_ = self._infer(self.observation_, self.counts_)

    def _check_settings(self) -> None:
        """Raise :class:`CNBError` naming a hyperparameter outside its allowed values."""
        value = self.semi_supervised
        if value not in SEMI_SUPERVISED:
            raise CNBError(f"semi_supervised must be one of {SEMI_SUPERVISED}, got {value!r}")
        if isinstance(self.n_iter, bool) or not (isinstance(self.n_iter, int) and self.n_iter >= 1):
            raise CNBError(f"n_iter must be a positive integer, got {self.n_iter!r}")
        if self.observation not in OBSERVATIONS:
            raise CNBError(
                f"observation must be one of {tuple(OBSERVATIONS)}, got {self.observation!r}"
            )
        if self.handle_unknown not in ("warn", "error", "ignore"):
            raise CNBError(
                f"handle_unknown must be 'warn', 'error' or 'ignore', got {self.handle_unknown!r}"
            )

    def _semi_supervised_mode(self) -> str | None:
        """``"gibbs"``, ``"em"`` or None (unlabelled rows unused, or none there)."""
        TaskNaiveBayes._check_settings(self)
        value = self.semi_supervised
        if value is False or self.unlabelled_X_.shape[0] == 0:
            return None
        return "em" if value == "em" else "gibbs"

    def _rng(self) -> np.random.Generator:
        return as_generator(self.random_state)

    def _groups(self, counts: Counts) -> tuple[np.ndarray, np.ndarray]:
        """Label group and feature group of each task (default: every task alone)."""
        alone = np.arange(counts.n_groups)
        return alone, alone

    def _grouped_posterior(
        self, model: DirichletNB, counts: Counts, feature_group: np.ndarray
    ) -> Posterior:
        """The predictive of per-task counts (labelled plus imputed or expected)."""
        return self._infer(model, counts)[0]

    def _infer_em(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        """MAP fit by EM over the missing labels; the evidence is the labelled rows'."""
        log_evidence = self._infer(model, counts)[1]
        label_group, feature_group = self._groups(counts)
        result = fit_em(
            model,
            counts,
            self.unlabelled_X_,
            self.unlabelled_task_,
            label_group,
            feature_group,
            max_iter=self.n_iter,
        )
        self.em_objective_ = result.objective
        self.unlabelled_proba_ = result.responsibilities
        return self._grouped_posterior(model, result.counts, feature_group), log_evidence

    def _infer_gibbs(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        """Average the predictive over Gibbs samples of the missing labels."""
        log_evidence = self._infer(model, counts)[1]
        label_group, feature_group = self._groups(counts)
        rows, task = self.unlabelled_X_, self.unlabelled_task_
        sampler = LabelSampler.start(counts, model.offsets, rows, task, label_group, feature_group)
        rng = self._rng()
        members = []
        burn_in = self.n_iter // 4
        for sweep in range(burn_in + self.n_iter):
            if sweep == burn_in:
                sampler.marginals[:] = 0.0
            sweep_with_model(rng, sampler, model)
            if sweep >= burn_in:
                members.append(
                    self._grouped_posterior(model, sampler.task_counts(counts, task), feature_group)
                )
        self.unlabelled_proba_ = sampler.marginals / self.n_iter
        return Posterior.average(members), log_evidence

    def _set_schema_attributes(self) -> None:
        """Attributes that follow from ``schema_`` and the hyperparameters."""
        if self.observation not in OBSERVATIONS:
            raise CNBError(
                f"observation must be one of {tuple(OBSERVATIONS)}, got {self.observation!r}"
            )
        self.classes_ = np.asarray(self.schema_.classes)
        names = (
            self.schema_.categories[0]
            if self.observation == "multinomial"
            else self.schema_.feature_names
        )
        self.n_features_in_ = len(names)
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self.observation_ = OBSERVATIONS[self.observation](self.schema_, self.alpha, self.beta)

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        raise NotImplementedError

    # ------------------------------------------------------------------ prediction
    def predict_log_proba(self, X: Any, tasks: Any = None) -> np.ndarray:
        """Log posterior predictive ``log P(y | x, D)`` of each row's label.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_rows, n_features)
        tasks : array-like of shape (n_rows,)
            Task ids; a task never seen in training gets the model's cold-start predictive.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Columns follow ``classes_``.
        """
        X_codes, task_index, cold_group = self._encode_for_prediction(X, tasks)
        return self.posterior_.predict_log_proba(self.observation_, X_codes, task_index, cold_group)

    def predict_proba(self, X: Any, tasks: Any = None) -> np.ndarray:
        """Posterior predictive ``P(y | x, D)``; shape (n_rows, n_classes), rows sum to 1."""
        return np.exp(self.predict_log_proba(X, tasks))

    def predict(self, X: Any, tasks: Any = None, loss: LossMatrix | Any = None) -> np.ndarray:
        """Bayes decisions: the class of least posterior expected loss.

        Parameters
        ----------
        X, tasks
            As in :meth:`predict_log_proba`.
        loss : LossMatrix or array-like of shape (n_classes, n_classes), optional
            ``loss[y, a]`` in ``classes_`` order; default 0-1 loss (the most probable class).

        Returns
        -------
        ndarray of shape (n_rows,)
            Values from ``classes_``.
        """
        proba = self.predict_proba(X, tasks)
        if loss is None:
            return self.classes_[np.argmax(proba, axis=1)]
        return self.classes_[bayes_decision(proba, as_loss_matrix(loss, self.classes_))]

    def score(self, X: Any, y: Any, tasks: Any = None, sample_weight: Any = None) -> float:
        """Mean accuracy of :meth:`predict` on labelled rows.

        ``sample_weight`` is refused: the models are fitted on counts of rows, and a score
        weighted differently from the fit would mislead.
        """
        if sample_weight is not None:
            raise CNBError(
                "sample_weight is not supported: the models count rows; repeat or drop rows "
                "instead of weighting them"
            )
        y = as_vector(y)
        predicted = self.predict(X, tasks)
        labelled = ~pd.isna(y)
        return float(np.mean(predicted[labelled].astype(object) == y[labelled]))

    def _encode_for_prediction(
        self, X: Any, tasks: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not hasattr(self, "posterior_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X, tasks = self._split_tasks(X, tasks)
        if self.observation != "categorical":
            X_codes = as_document_term(X, self.n_words_)
        else:
            frame = as_feature_input(X, self.schema_.n_features, type(self).__name__)
            X_codes = self.schema_.encode_features(frame, handle_unknown=self.handle_unknown)
        task_values = as_vector(tasks)
        if task_values.shape != (X_codes.shape[0],):
            raise DataError(
                f"X has {X_codes.shape[0]} rows but tasks has shape {task_values.shape}"
            )
        task_index = index_tasks(task_values, self.task_ids_)
        cold_group = np.full(task_index.size, -1, dtype=np.int64)
        cold = task_index < 0
        if cold.any():
            cold_group[cold] = factorize_tasks(task_values[cold])[0]
        return X_codes, task_index, cold_group

    def _split_tasks(self, X: Any, tasks: Any) -> tuple[Any, Any]:
        if tasks is not None:
            return X, tasks
        if self.task_column is None:
            raise DataError("tasks are required: pass tasks=... or set task_column")
        if not isinstance(X, pd.DataFrame) or self.task_column not in X.columns:
            raise DataError(f"task column {self.task_column!r} not found in X")
        return X.drop(columns=[self.task_column]), X[self.task_column].to_numpy()

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Save the fitted model as a zip of JSON metadata and NPZ arrays (no pickle)."""
        save_model(self, path)

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """JSON metadata and arrays that restore the fitted state."""
        arrays = {
            "label_counts": self.counts_.label_counts,
            "value_counts": self.counts_.value_counts,
            "unlabelled_X": self.unlabelled_X_,
            "unlabelled_task": self.unlabelled_task_,
        }
        arrays.update({f"posterior_{k}": v for k, v in self.posterior_.to_arrays().items()})
        for name in _OPTIONAL_ARRAYS:
            if hasattr(self, f"{name}_"):
                arrays[name] = getattr(self, f"{name}_")
        meta = {"log_evidence": float(self.log_evidence_)}
        return meta, arrays

    def _restore(
        self,
        schema: FeatureSchema,
        task_ids: np.ndarray,
        meta: dict[str, Any],
        arrays: dict[str, np.ndarray],
    ) -> None:
        """Set the fitted state from a model file's parts, checking that they fit together.

        Raises
        ------
        CNBError
            Naming the first array whose shape or values contradict the schema, the task ids
            or the hyperparameters.
        """
        self._check_settings()
        n_tasks, n_classes, n_values = task_ids.size, schema.n_classes, schema.n_values_total
        expected = {
            "label_counts": (n_tasks, n_classes),
            "value_counts": (n_tasks, n_classes, n_values),
        }
        for name, shape in expected.items():
            if arrays[name].shape != shape:
                raise CNBError(
                    f"array {name} has shape {arrays[name].shape}, expected {shape} for the "
                    f"{n_tasks} task ids and the schema's {n_classes} classes and {n_values} values"
                )
        unlabelled_X, unlabelled_task = arrays["unlabelled_X"], arrays["unlabelled_task"]
        if unlabelled_X.shape != (unlabelled_task.size, schema.n_features) or (
            unlabelled_task.size
            and not 0 <= unlabelled_task.min() <= unlabelled_task.max() < n_tasks
        ):
            raise CNBError("the unlabelled rows do not match the task ids and the schema")
        self.schema_, self.task_ids_ = schema, task_ids
        self.counts_ = Counts(arrays["label_counts"], arrays["value_counts"])
        self.unlabelled_X_ = arrays["unlabelled_X"]
        self.unlabelled_task_ = arrays["unlabelled_task"]
        self._set_schema_attributes()
        prefix = "posterior_"
        self.posterior_ = Posterior.from_arrays(
            {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        )
        self.posterior_.check_shapes(n_tasks, n_classes, n_values)
        self.log_evidence_ = float(meta["log_evidence"])
        for name in _OPTIONAL_ARRAYS:
            if name in arrays:
                setattr(self, f"{name}_", arrays[name])


def _check_labels(schema: FeatureSchema, codes: np.ndarray, fitted: bool) -> None:
    """At least two classes, and some labelled row in a first fit."""
    if schema.n_classes < 2:
        raise SchemaError(
            f"the labels have only one class {list(schema.classes)}; declare the others "
            "with classes=[...]"
        )
    if not fitted and not (codes >= 0).any():
        raise DataError("every label is missing: there is nothing to learn from")


def as_generator(random_state: int | np.random.Generator | None) -> np.random.Generator:
    """The generator itself, or a new one seeded by ``random_state``."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


def own_counts_posterior(counts: Counts) -> Posterior:
    """Every task predicts from its own counts; a new task from none (the prior)."""
    n_tasks = counts.n_groups
    empty = np.zeros((1, *counts.value_counts.shape[1:]), dtype=np.int64)
    return Posterior.single(
        component_counts=np.concatenate([counts.value_counts, empty]),
        task_label_counts=counts.label_counts,
        task_component=np.arange(n_tasks),
        cold_label_counts=np.zeros(counts.label_counts.shape[1], dtype=np.int64),
        cold_component=n_tasks,
    )


class NoSharingNB(TaskNaiveBayes):
    """One independent naive Bayes per task (No-Sharing).

    Each task ``u`` has its own ``φ_u ~ Dir(α)`` and ``θ[u, y, f] ~ Dir(β[y, f])``. A task
    never seen in training gets the prior predictive (no counts). Unlabelled rows are used
    as ``semi_supervised`` says (by default not at all). Parameters are those of
    :class:`TaskNaiveBayes`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    schema_ : FeatureSchema
    task_ids_ : ndarray of shape (n_tasks,)
    counts_ : Counts with n_tasks groups
    log_evidence_ : float
        Exact ``log P(D | NS) = Σ_u log P(D_u)`` of the labelled rows.
    unlabelled_proba_ : ndarray of shape (n_unlabelled, n_classes)
        With ``semi_supervised``: label probabilities of the unlabelled training rows (EM
        responsibilities, or Gibbs marginals averaged over sweeps).
    em_objective_ : ndarray of shape (n_iterations + 1,)
        With ``semi_supervised="em"``: the log posterior density after each iteration.

    Notes
    -----
    ``log P(D | NS) = Σ_u [log DM(m[u]; α) + Σ_{y,f} log DM(n[u, y, f]; β[y, f])]``.

    Examples
    --------
    >>> model = NoSharingNB().fit([["a"], ["b"], ["a"]], [1, 0, 1], tasks=["u", "u", "v"])
    >>> model.predict_proba([["a"]], tasks=["u"]).round(3).tolist()
    [[0.333, 0.667]]
    """

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        return own_counts_posterior(counts), float(model.log_marginal(counts).sum())


class CompleteSharingNB(TaskNaiveBayes):
    """One naive Bayes for every task (Complete-Sharing): the tasks' counts are pooled.

    The label marginal is pooled too. A task never seen in training is predicted like any
    other. Unlabelled rows are used as ``semi_supervised`` says (by default not at all).
    Parameters are those of :class:`TaskNaiveBayes`.

    Attributes
    ----------
    classes_, schema_, task_ids_, counts_
        As in :class:`NoSharingNB`.
    log_evidence_ : float
        Exact ``log P(D | CS)``: the evidence of the pooled counts of the labelled rows.
    unlabelled_proba_, em_objective_
        As in :class:`NoSharingNB`.
    feature_log_prob_ : list of ndarray of shape (n_classes, V_f)
        Predictive log P(x_f | y) per feature (as scikit-learn's ``CategoricalNB``).
    class_log_prior_ : ndarray of shape (n_classes,)
    """

    def _infer(self, model: DirichletNB, counts: Counts) -> tuple[Posterior, float]:
        pooled = counts.total()
        posterior = Posterior.single(
            component_counts=pooled.value_counts,
            task_label_counts=np.repeat(pooled.label_counts, counts.n_groups, axis=0),
            task_component=np.zeros(counts.n_groups, dtype=np.int64),
            cold_label_counts=pooled.label_counts[0],
            cold_component=0,
        )
        return posterior, float(model.log_marginal(pooled)[0])

    def _groups(self, counts: Counts) -> tuple[np.ndarray, np.ndarray]:
        together = np.zeros(counts.n_groups, dtype=np.int64)
        return together, together

    @property
    def feature_log_prob_(self) -> list[np.ndarray]:
        """Predictive log P(x_f | y) per feature, each of shape (n_classes, V_f)."""
        table = self.observation_.log_feature_table(self.posterior_.component_counts[0])
        offsets = self.schema_.offsets
        return [table[:, offsets[f] : offsets[f + 1]] for f in range(self.schema_.n_features)]

    @property
    def class_log_prior_(self) -> np.ndarray:
        """Predictive log P(y) from the pooled label counts, shape (n_classes,)."""
        return self.observation_.log_label_prior(self.posterior_.cold_label_counts)
