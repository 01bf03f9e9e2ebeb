"""Text tasks: tokenisation, vocabularies, document–term matrices and mutual information.

The default tokeniser lower-cases and keeps runs of letters and digits
(``re.findall(r"[a-z0-9]+", text.lower())``): "Don't e-mail ME!" → ``["don", "t", "e",
"mail", "me"]``. Any callable ``str -> list[str]`` may replace it. Vocabularies are built by
scikit-learn's ``CountVectorizer`` (``min_df``, ``max_features``) and always on training
documents only; a word not in the vocabulary is ignored when documents are transformed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

from clusterednb.data.schema import FeatureSchema
from clusterednb.exceptions import DataError

_TOKEN = re.compile(r"[a-z0-9]+")


def default_tokenizer(text: str) -> list[str]:
    """Lower-case runs of letters and digits.

    Examples
    --------
    >>> default_tokenizer("Don't e-mail ME!")
    ['don', 't', 'e', 'mail', 'me']
    """
    return _TOKEN.findall(str(text).lower())


class Vocabulary:
    """Words of a corpus and the document–term matrices over them.

    Parameters
    ----------
    min_df : int or float, default=1
        Keep words in at least this many training documents (a fraction when float).
    max_features : int, optional
        Keep the most frequent words only.
    tokenizer : callable, optional
        ``str -> list[str]``; default :func:`default_tokenizer`.

    Examples
    --------
    >>> vocabulary = Vocabulary(min_df=2).fit(["lunch at noon", "lunch later", "noon call"])
    >>> vocabulary.words_
    ('lunch', 'noon')
    """

    def __init__(
        self,
        min_df: int | float = 1,
        max_features: int | None = None,
        tokenizer: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.min_df = min_df
        self.max_features = max_features
        self.tokenizer = tokenizer or default_tokenizer

    def _vectorizer(self, vocabulary: Sequence[str] | None = None) -> CountVectorizer:
        return CountVectorizer(
            tokenizer=self.tokenizer,
            lowercase=False,
            token_pattern=None,
            min_df=self.min_df,
            max_features=self.max_features,
            vocabulary=vocabulary,
            dtype=np.int64,
        )

    def fit(self, documents: Sequence[str]) -> Vocabulary:
        """Learn the words of the training documents.

        Examples
        --------
        >>> Vocabulary().fit(["budget review", "review"]).words_
        ('budget', 'review')
        """
        vectorizer = self._vectorizer()
        try:
            vectorizer.fit(_texts(documents))
        except ValueError as error:  # e.g. no word survives min_df
            raise DataError(f"cannot build a vocabulary: {error}") from error
        self.words_ = tuple(vectorizer.get_feature_names_out().tolist())
        return self

    def transform(self, documents: Sequence[str]) -> sparse.csr_matrix:
        """Word counts of each document: CSR of shape (n_documents, n_words), int64.

        Examples
        --------
        >>> vocabulary = Vocabulary().fit(["budget review", "review"])
        >>> vocabulary.transform(["review the review", "party"]).toarray().tolist()
        [[0, 2], [0, 0]]
        """
        if not hasattr(self, "words_"):
            raise DataError("the vocabulary is not fitted yet; call fit first")
        return self._vectorizer(self.words_).transform(_texts(documents)).tocsr()

    def fit_transform(self, documents: Sequence[str]) -> sparse.csr_matrix:
        """:meth:`fit` then :meth:`transform`.

        Examples
        --------
        >>> Vocabulary().fit_transform(["a b b", "b c"]).toarray().tolist()
        [[1, 2, 0], [0, 1, 1]]
        """
        return self.fit(documents).transform(documents)


def _texts(documents: Any) -> list[str]:
    texts = []
    for row, document in enumerate(documents):
        if document is None or (isinstance(document, float) and np.isnan(document)):
            texts.append("")
        elif isinstance(document, str):
            texts.append(document)
        else:
            raise DataError(f"document in row {row} is a {type(document).__name__}, not text")
    return texts


def mutual_information(X: Any, y: Any) -> np.ndarray:
    """Mutual information (bits) between each word's presence and the label.

    The plain maximum-likelihood (plug-in) estimate: ``Σ_{x, y} p(x, y) log2(p(x, y) /
    (p(x) p(y)))`` with every probability a relative frequency in the given rows (empty
    cells contribute 0). Compute it on training rows only. For the lecture notes'
    "microsoft" table (present in 6 of 450 documents of one class, 107 of 450 of the other)
    it is 0.0984 bits; the notes' 0.095 adds one to every joint cell and, separately, to the
    marginals, which is not a probability model of the same table.

    Parameters
    ----------
    X : array-like or sparse of shape (n_documents, n_words)
        Counts or presence (any positive entry is "present").
    y : array-like of shape (n_documents,)
        Labels (any values; all rows must be labelled).

    Returns
    -------
    ndarray of shape (n_words,)

    Examples
    --------
    >>> X = np.array([[1, 0, 2], [0, 1, 0], [1, 0, 0], [0, 1, 1]])
    >>> mutual_information(X, [1, 0, 1, 0]).round(4).tolist()  # words 0, 1 decide; 2 not
    [1.0, 1.0, 0.0]
    """
    present = sparse.csr_matrix(X) > 0
    labels = np.asarray(y)
    if labels.shape != (present.shape[0],):
        raise DataError(f"X has {present.shape[0]} rows but y has shape {labels.shape}")
    classes, codes = np.unique(labels, return_inverse=True)
    n = labels.size
    indicator = sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(classes.size, n))
    joint_present = np.asarray((indicator @ present).todense(), dtype=float)  # (C, W)
    class_totals = np.bincount(codes, minlength=classes.size).astype(float)[:, None]
    joint_absent = class_totals - joint_present
    p_y = class_totals / n
    total = np.zeros(present.shape[1])
    for joint in (joint_present, joint_absent):
        p_xy = joint / n
        p_x = p_xy.sum(axis=0, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p_xy > 0, p_xy * np.log2(p_xy / (p_x * p_y)), 0.0)
        total += terms.sum(axis=0)
    return total


def select_by_mutual_information(X: Any, y: Any, n_words: int) -> np.ndarray:
    """Indices of the ``n_words`` words of highest mutual information (ties: lower index).

    Examples
    --------
    >>> X = np.array([[1, 0, 2], [0, 1, 0], [1, 0, 0], [0, 1, 1]])  # word 2 says nothing
    >>> select_by_mutual_information(X, [1, 0, 1, 0], 2).tolist()
    [0, 1]
    """
    scores = mutual_information(X, y)
    return np.sort(np.argsort(-scores, kind="stable")[:n_words])


def as_document_term(X: Any, n_words: int | None = None) -> sparse.csr_matrix:
    """Check a document–term matrix (dense, DataFrame or scipy.sparse) and return CSR int64.

    Entries must be finite non-negative integers (word counts or 0/1 presence); the error
    names the first bad row and column. Never densifies a sparse input.

    Examples
    --------
    >>> as_document_term(np.array([[1, 0, 2], [0, 1, 0]])).nnz
    3
    >>> as_document_term(np.array([[1, -1]]))
    Traceback (most recent call last):
    ...
    clusterednb.exceptions.DataError: document-term entry at row 0, column 1 is -1; expected ...
    """
    if sparse.issparse(X):
        matrix = sparse.csr_matrix(X)
    elif hasattr(X, "sparse") and all(isinstance(t, pd.SparseDtype) for t in X.dtypes):
        matrix = X.sparse.to_coo().tocsr()  # a sparse DataFrame stays sparse
    else:
        values = X.to_numpy() if hasattr(X, "to_numpy") else np.asarray(X)
        if values.ndim != 2:
            raise DataError(
                f"a document-term matrix must be 2-D, got shape {values.shape}. Reshape your "
                "data to one row per document"
            )
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError) as error:
            raise DataError(f"document-term entries must be numbers: {error}") from error
        matrix = sparse.csr_matrix(values)
    data = matrix.data.astype(np.float64, copy=False)
    bad = ~np.isfinite(data) | (data < 0) | (data != np.round(data))
    if bad.any():
        coo = matrix.tocoo()
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"document-term entry at row {int(coo.row[first])}, column {int(coo.col[first])} "
            f"is {data[first]:g}; expected a non-negative integer count"
        )
    if n_words is not None and matrix.shape[1] != n_words:
        raise DataError(f"X has {matrix.shape[1]} words but the model's vocabulary has {n_words}")
    matrix = matrix.astype(np.int64)
    matrix.eliminate_zeros()
    return matrix


def document_schema(
    words: Sequence[str], classes: Sequence[Any], observation: str
) -> FeatureSchema:
    """The schema of a document model over ``words``.

    ``"bernoulli"``: one feature per word with values ``(0, 1)`` (absent, present).
    ``"multinomial"``: one feature ``"tokens"`` whose values are the words.

    Examples
    --------
    >>> document_schema(["cake", "tea"], [0, 1], "multinomial").categories
    (('cake', 'tea'),)
    >>> document_schema(["cake", "tea"], [0, 1], "bernoulli").feature_names
    ('cake', 'tea')
    """
    if len(set(words)) != len(words):
        raise DataError("the vocabulary's words must be distinct")
    if observation == "bernoulli":
        return FeatureSchema(tuple(words), tuple((0, 1) for _ in words), tuple(classes))
    return FeatureSchema(("tokens",), (tuple(words),), tuple(classes))
