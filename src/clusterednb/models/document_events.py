"""The document event models: the Dirichlet–naive-Bayes family over a vocabulary.

Both are the categorical :class:`~clusterednb.models.observation.DirichletNB` on other flat values
(Bernoulli: each word absent or present; multinomial: one feature whose values are the words),
so the evidence and every engine are unchanged; only the rows arrive as a sparse document–term
matrix. :data:`OBSERVATIONS` names every observation model an estimator can take.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from clusterednb.models.observation import DirichletNB


class BernoulliDirichletNB(DirichletNB):
    """The Bernoulli event model over a vocabulary: each word is present or absent.

    It IS the categorical model with two values per word (``absent``, ``present``, flat
    values ``2w`` and ``2w + 1``), so evidence and engines are unchanged; only rows arrive
    as a sparse document–term matrix, and the log joint is computed without densifying it:
    ``Σ_w log θ(absent) + Σ_{w present} [log θ(present) − log θ(absent)]``.

    Examples
    --------
    Two words, each absent or present; one document of class 0 held "tea" only:

    >>> from scipy import sparse
    >>> from clusterednb import FeatureSchema
    >>> model = BernoulliDirichletNB(FeatureSchema(("cake", "tea"), ((0, 1), (0, 1)), (0, 1)))
    >>> counts = np.array([[[1, 0, 0, 1], [0, 0, 0, 0]]])  # (table, class, 2 · words)
    >>> table = model.log_feature_table(counts)
    >>> rows = model.log_likelihood_rows(sparse.csr_matrix([[0, 3]]), table, np.array([0]))
    >>> np.exp(rows).round(4).tolist()  # class 0: 2/3 · 2/3; class 1: 1/2 · 1/2
    [[0.4444, 0.25]]
    """

    def log_likelihood_rows(
        self, X: sparse.csr_matrix, log_tables: np.ndarray, table_of_row: np.ndarray
    ) -> np.ndarray:
        """Documents as CSR counts; any positive count is "present".

        Examples
        --------
        A word counted twice is present once; under the prior alone, present has odds 1:1.

        >>> from clusterednb import FeatureSchema
        >>> model = BernoulliDirichletNB(FeatureSchema(("cake",), ((0, 1),), (0, 1)))
        >>> table = model.log_feature_table(np.zeros((1, 2, 2)))
        >>> twice = np.array([[2]])  # a dense array works too
        >>> rows = model.log_likelihood_rows(twice, table, np.array([0]))
        >>> np.exp(rows).tolist()
        [[0.5, 0.5]]
        """
        X = sparse.csr_matrix(X)
        absent = log_tables[..., 0:-1:2]  # (T, C, W)
        present = log_tables[..., 1:-1:2]
        out = absent.sum(axis=-1)[table_of_row]
        presence = (X > 0).astype(np.float64).tocsr()
        for table in np.unique(table_of_row):
            rows = np.flatnonzero(table_of_row == table)
            out[rows] += presence[rows] @ (present[table] - absent[table]).T
        return out


class MultinomialDirichletNB(DirichletNB):
    """The multinomial event model: word counts per class, a Dirichlet over the vocabulary.

    The schema has one feature whose values are the words; the counts are token counts, so
    the evidence ``log DM(n[y]; β)`` and every engine are the categorical ones. A document's
    predictive is the Dirichlet-multinomial of its word counts ``x`` given the posterior
    ``a = β + n[y]`` (the exact ratio of evidences, not a product of per-word plug-ins):
    ``Σ_w [lgamma(a_w + x_w) − lgamma(a_w)] − [lgamma(A + L) − lgamma(A)]``, ``A = Σ a``,
    ``L = Σ x``. Its "feature table" therefore holds ``log a`` and, in the last slot,
    ``log A``.

    Examples
    --------
    A two-word vocabulary, no training tokens: a document "cake cake" under β = 1 has
    probability ``(1/2)(2/3) = 1/3`` for either class.

    >>> from scipy import sparse
    >>> from clusterednb import FeatureSchema
    >>> model = MultinomialDirichletNB(FeatureSchema(("tokens",), (("cake", "tea"),), (0, 1)))
    >>> table = model.log_feature_table(np.zeros((1, 2, 2)))
    >>> rows = model.log_likelihood_rows(sparse.csr_matrix([[2, 0]]), table, np.array([0]))
    >>> np.exp(rows).round(4).tolist()
    [[0.3333, 0.3333]]
    """

    def log_feature_table(self, value_counts: np.ndarray) -> np.ndarray:
        """``log(β + n)`` of shape (..., C, W + 1), last slot ``log Σ_w (β + n)``.

        Examples
        --------
        >>> from clusterednb.examples import models as toy
        >>> model = toy.tokens_model()  # the class's example
        >>> np.exp(model.log_feature_table(np.array([[[3, 0], [0, 1]]]))[0]).round(12).tolist()
        [[4.0, 1.0, 5.0], [1.0, 2.0, 3.0]]
        """
        posterior = self.beta + value_counts
        table = np.empty((*posterior.shape[:-1], posterior.shape[-1] + 1))
        table[..., :-1] = np.log(posterior)
        table[..., -1] = np.log(posterior.sum(axis=-1))
        return table

    def log_likelihood_rows(
        self, X: sparse.csr_matrix, log_tables: np.ndarray, table_of_row: np.ndarray
    ) -> np.ndarray:
        """The Dirichlet-multinomial of each document's word counts (CSR counts).

        Examples
        --------
        >>> from scipy import sparse
        >>> from clusterednb.examples import models as toy
        >>> model = toy.tokens_model()  # the class's example
        >>> table = model.log_feature_table(np.array([[[3, 0], [0, 1]]]))
        >>> rows = model.log_likelihood_rows(sparse.csr_matrix([[1, 0]]), table, np.array([0]))
        >>> np.exp(rows).round(4).tolist()  # one "cake": 4/5 for class 0, 1/3 for class 1
        [[0.8, 0.3333]]
        """
        counts = sparse.csr_matrix(X)
        lengths = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
        out = np.zeros((X.shape[0], log_tables.shape[1]))
        for table in np.unique(table_of_row):
            rows = np.flatnonzero(table_of_row == table)
            part = counts[rows].tocoo()
            a = np.exp(log_tables[table, :, :-1])  # (C, W)
            total = np.exp(log_tables[table, :, -1])  # (C,)
            terms = gammaln(a[:, part.col] + part.data) - gammaln(a[:, part.col])  # (C, nnz)
            per_row = np.zeros((rows.size, a.shape[0]))
            np.add.at(per_row, part.row, terms.T)
            per_row -= gammaln(total + lengths[rows][:, None]) - gammaln(total)
            out[rows] += per_row
        return out


OBSERVATIONS = {
    "categorical": DirichletNB,
    "bernoulli": BernoulliDirichletNB,
    "multinomial": MultinomialDirichletNB,
}
