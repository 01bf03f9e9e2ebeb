"""Observation models: what a cluster's statistics say about its data.

:class:`ObservationModel` is the interface the engines call: additive statistics of a group
(:class:`~clusterednb.stats.counts.Counts`), ``log_marginal(counts)``, ``log_joint`` and
``log_predictive``. The Dirichlet–naive-Bayes family (categorical, Bernoulli and multinomial
events) is conjugate: its marginals are closed form, which the collapsed engines need (an
engine refuses a model without, by name: :func:`clusterednb.inference.result.require_conjugate`).
Every model, conjugate or not, gives the block engine its cluster scores through one
interface, :class:`~clusterednb.models.block_scores.BlockAlgebra` (this family by
:meth:`DirichletNB.block_scores`; the clustered logistic model by its joint scores).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

import numpy as np
from scipy.special import gammaln

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import CNBError
from clusterednb.models.block_scores import CountBlocks
from clusterednb.stats.counts import Counts
from clusterednb.stats.kernels import log_joint_rows, log_normalize_rows
from clusterednb.stats.special import log_dirichlet_norm, segment_sum


class ObservationModel(Protocol):
    """What an engine may ask of an observation model.

    Attributes
    ----------
    schema : FeatureSchema
    conjugate : bool
        Closed-form marginal likelihoods of count statistics (the collapsed engines need it).

    Examples
    --------
    :class:`DirichletNB` is one:

    >>> from clusterednb import FeatureSchema
    >>> model = DirichletNB(FeatureSchema(("colour",), (("red", "blue"),), (0, 1)))
    >>> model.conjugate, model.schema.n_values_total
    (True, 2)
    """

    schema: FeatureSchema
    conjugate: ClassVar[bool]

    def log_marginal(self, counts: Counts) -> np.ndarray:
        """``log P(data of each group)``, shape (n_groups,).

        Examples
        --------
        See :meth:`DirichletNB.log_marginal`.

        >>> from clusterednb import Counts, FeatureSchema
        >>> model = DirichletNB(FeatureSchema(("colour",), (("red", "blue"),), (0, 1)))
        >>> empty = Counts(np.zeros((1, 2), int), np.zeros((1, 2, 2), int))
        >>> model.log_marginal(empty).tolist()  # no rows: probability 1
        [0.0]
        """
        ...

    def log_predictive(self, X: np.ndarray, counts: Counts) -> np.ndarray:
        """``log P(y | x, data of the row's group)``, shape (n_rows, n_classes).

        Examples
        --------
        See :meth:`DirichletNB.log_predictive`.

        >>> from clusterednb import Counts, FeatureSchema
        >>> model = DirichletNB(FeatureSchema(("colour",), (("red", "blue"),), (0, 1)))
        >>> empty = Counts(np.zeros((1, 2), int), np.zeros((1, 2, 2), int))
        >>> np.exp(model.log_predictive(np.array([[0]]), empty)).tolist()  # the prior alone
        [[0.5, 0.5]]
        """
        ...


class ConjugateModel(ObservationModel, Protocol):
    """An observation model whose count statistics have closed-form marginals under Dirichlet
    pseudo-counts: what the collapsed engines (exact, Gibbs, BHC, search, variational) read.

    Attributes
    ----------
    alpha : float array of shape (n_classes,)
        Label pseudo-counts.
    beta : float array of shape (n_classes, n_values_total)
        Feature-value pseudo-counts on the flat value axis.
    offsets : int array of shape (n_features + 1,)
        Where each feature's values start on that axis.

    Examples
    --------
    :class:`DirichletNB` is one:

    >>> from clusterednb import FeatureSchema
    >>> model = DirichletNB(FeatureSchema(("colour",), (("red", "blue"),), (0, 1)))
    >>> model.beta.shape, model.offsets.tolist()
    ((2, 2), [0, 2])
    """

    alpha: np.ndarray
    beta: np.ndarray
    offsets: np.ndarray

    def log_marginal_labels(self, label_counts: np.ndarray) -> np.ndarray:
        """``log P(labels of each group)``, shape (n_groups,); see
        :meth:`DirichletNB.log_marginal_labels`."""
        ...

    def log_marginal_features(self, value_counts: np.ndarray) -> np.ndarray:
        """``log P(features of each group | labels)``, shape (n_groups,); see
        :meth:`DirichletNB.log_marginal_features`."""
        ...

    def log_label_prior(self, label_counts: np.ndarray) -> np.ndarray:
        """Posterior predictive log label probabilities, shape (..., n_classes)."""
        ...

    def log_feature_table(self, value_counts: np.ndarray) -> np.ndarray:
        """Posterior predictive log value probabilities, shape (..., n_classes, n_values_total)."""
        ...


def _positive_finite(values: np.ndarray, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(values) | (values <= 0)
    if bad.any():
        raise CNBError(
            f"{name} must be positive and finite; got {values.ravel()[np.flatnonzero(bad)[0]]!r}"
        )
    return values


def resolve_alpha(alpha: Any, n_classes: int) -> np.ndarray:
    """Label pseudo-counts as an array of shape (n_classes,) from a scalar or per-class values.

    Examples
    --------
    >>> resolve_alpha(2.0, 2).tolist()
    [2.0, 2.0]
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim == 0:
        alpha = np.full(n_classes, float(alpha))
    if alpha.shape != (n_classes,):
        raise CNBError(f"alpha must be a scalar or have shape ({n_classes},), got {alpha.shape}")
    return _positive_finite(alpha, "alpha")


def resolve_beta(beta: Any, schema: FeatureSchema) -> np.ndarray:
    """Feature pseudo-counts as an array of shape (n_classes, n_values_total).

    ``beta`` may be a scalar, one value per feature (n_features,), one per flat value
    (n_values_total,), or the full (n_classes, n_values_total) array.

    Examples
    --------
    >>> schema = FeatureSchema(("a", "b"), ((0, 1), (0, 1, 2)), ("no", "yes"))
    >>> resolve_beta([0.5, 2.0], schema).tolist()  # one value per feature, spread
    [[0.5, 0.5, 2.0, 2.0, 2.0], [0.5, 0.5, 2.0, 2.0, 2.0]]
    """
    beta = np.asarray(beta, dtype=np.float64)
    n_classes, n_values, n_features = schema.n_classes, schema.n_values_total, schema.n_features
    if beta.ndim == 0:
        full = np.full((n_classes, n_values), float(beta))
    elif beta.shape == (n_features,):
        full = np.broadcast_to(beta[schema.value_feature], (n_classes, n_values)).copy()
    elif beta.shape == (n_values,):
        full = np.broadcast_to(beta, (n_classes, n_values)).copy()
    elif beta.shape == (n_classes, n_values):
        full = beta.copy()
    else:
        raise CNBError(
            f"beta must be a scalar or have shape ({n_features},) per feature, "
            f"({n_values},) per value or ({n_classes}, {n_values}); got {beta.shape}"
        )
    return _positive_finite(full, "beta")


class DirichletNB:
    """Naive Bayes with Dirichlet priors on the label and on every (class, feature) pair.

    ``φ ~ Dir(α)`` over labels; ``θ[y, f] ~ Dir(β[y, f])`` over the values of feature ``f``.
    All methods are vectorised over leading axes of the counts.

    Parameters
    ----------
    schema : FeatureSchema
    alpha : float or array-like of shape (n_classes,), default=1.0
        Label pseudo-counts.
    beta : float or array-like, default=1.0
        Feature pseudo-counts: scalar, (n_features,), (n_values_total,) or
        (n_classes, n_values_total).

    Notes
    -----
    The evidence of counts ``(m, n)`` is
    ``log DM(m; α) + Σ_{y,f} log DM(n[y, f]; β[y, f])`` with
    ``log DM(c; a) = log Z(a + c) − log Z(a)``, ``log Z(a) = Σ lgamma(a) − lgamma(Σ a)``:
    the probability of the ordered sequence of rows (no multinomial coefficient).
    The predictive of a row is
    ``P(y | x) ∝ (α_y + m_y) Π_f (β[y,f,x_f] + n[y,f,x_f]) / Σ_x (β[y,f,x] + n[y,f,x])``;
    a missing feature value contributes no factor.

    Examples
    --------
    Two rows of one task, labels 0 and 1, colours red and blue:
    ``P(labels) = (1/2)(1/3)``, ``P(colours | labels) = (1/2)(1/2)``.

    >>> import numpy as np
    >>> from clusterednb import Counts, FeatureSchema
    >>> schema = FeatureSchema(("colour",), (("red", "blue"),), (0, 1))
    >>> counts = Counts.from_codes(np.array([[0], [1]]), np.array([0, 1]), np.array([0, 0]),
    ...     n_tasks=1, n_classes=2, offsets=schema.offsets)
    >>> bool(np.isclose(DirichletNB(schema).log_marginal(counts)[0], np.log(1 / 24)))
    True
    """

    conjugate: ClassVar[bool] = True

    def __init__(self, schema: FeatureSchema, alpha: Any = 1.0, beta: Any = 1.0) -> None:
        self.schema = schema
        self.offsets = schema.offsets
        self.alpha = resolve_alpha(alpha, schema.n_classes)
        self.beta = resolve_beta(beta, schema)
        self._log_norm_alpha = float(gammaln(self.alpha).sum() - gammaln(self.alpha.sum()))
        self._log_norm_beta = log_dirichlet_norm(self.beta, self.offsets)  # (C, F)

    # ------------------------------------------------------------------ evidence
    def block_scores(self, counts: Counts) -> CountBlocks:
        """This model's cluster scores over per-task ``counts``, for the block engine
        (:class:`~clusterednb.models.block_scores.BlockAlgebra`).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> blocks = toy.colour_model().block_scores(toy.three_task_counts())
        >>> everyone, first = blocks.of_members([0, 1, 2]), blocks.of_members([0])
        >>> blocks.log_score(everyone) < blocks.log_score(first)
        True
        """
        return CountBlocks(self, counts)

    def log_marginal_labels(self, label_counts: np.ndarray) -> np.ndarray:
        """``log DM(m; α)`` for label counts of shape (..., n_classes); returns shape (...).

        Examples
        --------
        >>> model = DirichletNB(FeatureSchema(("a",), ((0, 1),), ("no", "yes")))
        >>> round(float(np.exp(model.log_marginal_labels(np.array([2, 0])))), 12)  # 1/2 · 2/3
        0.333333333333
        """
        posterior = self.alpha + label_counts
        log_norm = gammaln(posterior).sum(axis=-1) - gammaln(posterior.sum(axis=-1))
        return log_norm - self._log_norm_alpha

    def log_marginal_features(self, value_counts: np.ndarray) -> np.ndarray:
        """``Σ_{y,f} log DM(n[y, f]; β[y, f])`` for counts of shape (..., C, V); returns (...).

        Examples
        --------
        One row of class "no" with ``a = 0`` and ``b = 0``: probability 1/2 · 1/3 under β = 1.

        >>> model = DirichletNB(FeatureSchema(("a", "b"), ((0, 1), (0, 1, 2)), ("no", "yes")))
        >>> counts = np.zeros((2, 5))
        >>> counts[0, [0, 2]] = 1
        >>> float(np.exp(model.log_marginal_features(counts)).round(4))
        0.1667
        """
        log_norm = log_dirichlet_norm(self.beta + value_counts, self.offsets)
        return (log_norm - self._log_norm_beta).sum(axis=(-2, -1))

    def log_marginal_each_feature(self, value_counts: np.ndarray) -> np.ndarray:
        """``Σ_y log DM(n[y, f]; β[y, f])`` of each feature ``f`` for counts of shape
        (..., C, V); returns shape (..., F). Summed over ``f`` it is
        :meth:`log_marginal_features`; the feature-relevance engines
        (:mod:`~clusterednb.inference.relevance`) need each feature apart.

        Examples
        --------
        >>> model = DirichletNB(FeatureSchema(("a", "b"), ((0, 1), (0, 1, 2)), ("no", "yes")))
        >>> counts = np.zeros((2, 5))
        >>> counts[0, [0, 2]] = 1
        >>> np.exp(model.log_marginal_each_feature(counts)).round(4).tolist()  # 1/2, 1/3
        [0.5, 0.3333]
        """
        log_norm = log_dirichlet_norm(self.beta + value_counts, self.offsets)
        return (log_norm - self._log_norm_beta).sum(axis=-2)

    def log_marginal(self, counts: Counts) -> np.ndarray:
        """Log evidence of each group's labelled rows.

        Parameters
        ----------
        counts : Counts with n_groups groups

        Returns
        -------
        ndarray of shape (n_groups,)

        Examples
        --------
        >>> from clusterednb import Counts, FeatureSchema
        >>> schema = FeatureSchema(("colour",), (("red", "blue"),), (0, 1))
        >>> model = DirichletNB(schema)
        >>> one_red_zero = Counts(np.array([[1, 0]]), np.array([[[1, 0], [0, 0]]]))
        >>> bool(np.isclose(model.log_marginal(one_red_zero)[0], np.log(1 / 2 * 1 / 2)))
        True
        """
        return self.log_marginal_labels(counts.label_counts) + self.log_marginal_features(
            counts.value_counts
        )

    # ------------------------------------------------------------------ prediction
    def log_label_prior(self, label_counts: np.ndarray) -> np.ndarray:
        """Predictive log P(y) from label counts of shape (..., C); returns shape (..., C).

        Examples
        --------
        >>> model = DirichletNB(FeatureSchema(("a",), ((0, 1),), ("no", "yes")))
        >>> np.exp(model.log_label_prior(np.array([3, 1]))).round(4).tolist()  # (1+3)/6, 2/6
        [0.6667, 0.3333]
        """
        posterior = self.alpha + label_counts
        return np.log(posterior) - np.log(posterior.sum(axis=-1, keepdims=True))

    def log_feature_table(self, value_counts: np.ndarray) -> np.ndarray:
        """Predictive log P(x_f = v | y) with a trailing zero slot for missing values.

        Parameters
        ----------
        value_counts : ndarray of shape (..., C, V)

        Returns
        -------
        ndarray of shape (..., C, V + 1)
            Entry ``[..., y, v]`` is the log predictive probability of flat value ``v`` given
            class ``y``; entry ``[..., y, V]`` is 0 (a missing value contributes no factor).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, one_red_zero = toy.colour_model(), toy.one_row_counts()
        >>> np.exp(model.log_feature_table(one_red_zero.value_counts)[0]).round(4).tolist()
        [[0.6667, 0.3333, 1.0], [0.5, 0.5, 1.0]]
        """
        posterior = self.beta + value_counts
        log_totals = np.log(segment_sum(posterior, self.offsets))  # (..., C, F)
        table = np.zeros((*posterior.shape[:-1], posterior.shape[-1] + 1))
        table[..., :-1] = np.log(posterior) - log_totals[..., self.schema.value_feature]
        return table

    def log_predictive(self, X: np.ndarray, counts: Counts) -> np.ndarray:
        """Posterior predictive log P(y | x, counts) for every class.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Category codes, -1 for missing.
        counts : Counts with 1 group (shared by every row) or n_rows groups (one per row)

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Normalised log probabilities.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, one_red_zero = toy.colour_model(), toy.one_row_counts()
        >>> proba = np.exp(model.log_predictive(np.array([[0], [-1]]), one_red_zero))
        >>> proba.round(4).tolist()  # red: 2/3 · 2/3 against 1/3 · 1/2; missing: label prior
        [[0.7273, 0.2727], [0.6667, 0.3333]]
        """
        n_rows = X.shape[0]
        if counts.n_groups not in (1, n_rows):
            raise CNBError(f"counts must have 1 or {n_rows} groups, got {counts.n_groups}")
        group = np.zeros(n_rows, dtype=np.int64) if counts.n_groups == 1 else np.arange(n_rows)
        log_joint = self.log_joint(
            X,
            self.log_label_prior(counts.label_counts)[group],
            self.log_feature_table(counts.value_counts),
            group,
        )
        return log_normalize_rows(log_joint)

    def log_joint(
        self,
        X: Any,
        log_prior_rows: np.ndarray,
        log_tables: np.ndarray,
        table_of_row: np.ndarray,
    ) -> np.ndarray:
        """Unnormalised log P(y, x) of each row under its own table: the label prior plus
        :meth:`log_likelihood_rows`.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features), or a document–term matrix
        log_prior_rows : ndarray of shape (n_rows, C)
        log_tables : ndarray of shape (n_tables, C, V + 1), from :meth:`log_feature_table`
        table_of_row : ndarray of shape (n_rows,)

        Returns
        -------
        ndarray of shape (n_rows, C)

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, one_red_zero = toy.colour_model(), toy.one_row_counts()
        >>> table = model.log_feature_table(one_red_zero.value_counts)
        >>> prior = model.log_label_prior(one_red_zero.label_counts)
        >>> log_joint = model.log_joint(np.array([[1]]), prior, table, np.array([0]))
        >>> np.exp(log_joint).round(4).tolist()  # blue: 2/3 · 1/3 and 1/3 · 1/2
        [[0.2222, 0.1667]]
        """
        return log_prior_rows + self.log_likelihood_rows(X, log_tables, table_of_row)

    def log_likelihood_rows(
        self, X: np.ndarray, log_tables: np.ndarray, table_of_row: np.ndarray
    ) -> np.ndarray:
        """``log P(x | y)`` of each row under its row's table, shape (n_rows, C).

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model, one_red_zero = toy.colour_model(), toy.one_row_counts()
        >>> table = model.log_feature_table(one_red_zero.value_counts)
        >>> rows = model.log_likelihood_rows(np.array([[0]]), table, np.array([0]))
        >>> np.exp(rows).round(4).tolist()
        [[0.6667, 0.5]]
        """
        out = np.empty((X.shape[0], log_tables.shape[1]))
        log_joint_rows(
            np.ascontiguousarray(X),
            self.offsets,
            np.zeros(out.shape),
            np.ascontiguousarray(log_tables),
            np.ascontiguousarray(table_of_row, dtype=np.int64),
            out,
        )
        return out
