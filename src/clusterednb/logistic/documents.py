"""Documents in :class:`~clusterednb.ClusteredLogisticRegression` (``observation="multinomial"``).

A document is a row of word counts over the vocabulary. The three places where the tabular
model reads one-hot features read, for documents:

- the clusters' feature model: the multinomial event model, a Dirichlet over the vocabulary
  (the categorical model of one feature whose values are the words, counted once per token,
  as :class:`~clusterednb.models.document_events.MultinomialDirichletNB`);
- the predicting regressions: the word counts and a one-hot of the task
  (:func:`document_design`; ``lr-pooled``'s design on documents);
- the label model of the clustering: a logistic regression of the label on a document's
  coordinates along the documents' leading directions (a truncated SVD; :func:`latent_design`)
  and an intercept. The Laplace integral is dense in the number of weights, so the
  vocabulary's 20 000 weights cannot be integrated per cluster; 16 directions can, and they
  carry what separates clusters' label rules (users who call the same words spam and ham
  differ in the sign of the weight on the direction that separates those words). A pooled
  regression's score in their place cannot see that: with half the users reversed, the
  pooled score is noise (tested).

Counting rows' feature values per task (:func:`task_value_counts`, of codes, and
:func:`task_word_counts`, of documents) lives here beside them, and the choice of the
regressions' design, of documents or of a table (:func:`regression_design`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import svds

from clusterednb.logistic.solvers.cluster_weighted import one_hot_tasks, sparse_design

N_DIRECTIONS = 16


def document_design(counts: sparse.csr_matrix, task: np.ndarray, n_tasks: int):
    """Word counts then a one-hot of the task, as CSR.

    Parameters
    ----------
    counts : sparse matrix of shape (n_rows, n_words)
    task : ndarray of shape (n_rows,)
        Task positions (-1: a task not seen in training, no column set).
    n_tasks : int

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_words + n_tasks)

    Examples
    --------
    >>> document_design(sparse.csr_matrix([[2, 0], [0, 1]]), np.array([1, -1]), 2).toarray()
    array([[2., 0., 0., 1.],
           [0., 1., 0., 0.]])
    """
    return sparse.hstack([counts.astype(np.float64), one_hot_tasks(task, n_tasks)], format="csr")


def task_word_counts(counts: sparse.csr_matrix, task: np.ndarray, n_tasks: int) -> np.ndarray:
    """Tokens of each word in each task's documents, shape (n_tasks, n_words).

    Examples
    --------
    >>> counts = sparse.csr_matrix([[2, 0], [0, 1], [1, 1]])
    >>> task_word_counts(counts, np.array([0, 0, 1]), 2).tolist()
    [[2, 1], [1, 1]]
    """
    indicator = one_hot_tasks(task, n_tasks).T.astype(np.int64)
    return np.asarray((indicator @ counts).toarray(), dtype=np.int64)


def latent_design(counts: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """The label model's design of ``rows``: their coordinates on the documents' leading
    directions, and an intercept, shape (len(rows), k + 1) with ``k ≤`` :data:`N_DIRECTIONS`.

    Every document (labelled or not) is weighed sublinearly (``log(1 + count)``) and scaled to
    unit length; the ``k`` leading right singular vectors of those rows span the directions
    (a truncated SVD, started from a fixed vector, so the same rows give the same numbers);
    each coordinate is divided by its standard deviation over ``rows``, so the label model's
    prior has one scale on every data set. ``k`` is at most a third of the smaller side of
    the matrix (none at all for a matrix too small to decompose).

    Parameters
    ----------
    counts : sparse matrix of shape (n_rows, n_words)
        All the documents of the fit.
    rows : ndarray of shape (n_selected,)
        Positions of the documents whose design is wanted (the labelled ones).

    Examples
    --------
    Two topics: the first direction tells them apart.

    >>> counts = sparse.csr_matrix(np.tile([[3, 1, 0, 0], [0, 0, 1, 3]], (6, 1)))
    >>> design = latent_design(counts, np.arange(12))
    >>> design.shape, bool(abs(design[0, 0] - design[1, 0]) > 1.0)
    ((12, 2), True)
    """
    weighed = counts.astype(np.float64)
    weighed.data = np.log1p(weighed.data)
    lengths = np.sqrt(np.asarray(weighed.multiply(weighed).sum(axis=1)).ravel())
    weighed = sparse.diags(1.0 / np.maximum(lengths, 1e-12)) @ weighed
    k = min(N_DIRECTIONS, min(weighed.shape) // 3)
    if k < 1:
        return np.ones((rows.size, 1))
    start = np.full(min(weighed.shape), 1.0 / np.sqrt(min(weighed.shape)))
    _, _, directions = svds(weighed, k=k, v0=start, solver="arpack")
    coordinates = np.asarray(weighed[rows] @ directions.T)
    spread = coordinates.std(axis=0)
    coordinates /= np.where(spread > 0, spread, 1.0)
    return np.column_stack([coordinates, np.ones(rows.size)])


def value_counts_of_rows(codes, offsets: np.ndarray) -> np.ndarray:
    """Feature-value counts of some rows together, shape (n_values_total,): of feature codes
    (n_rows, n_features) or of documents' word counts (a sparse (n_rows, n_words) matrix).

    Examples
    --------
    >>> value_counts_of_rows(np.array([[0], [1], [0]]), np.array([0, 2])).tolist()
    [2, 1]
    >>> value_counts_of_rows(sparse.csr_matrix([[2, 0], [1, 3]]), np.array([0, 2])).tolist()
    [3, 3]
    """
    one_task = np.zeros(codes.shape[0], dtype=np.int64)
    if sparse.issparse(codes):
        return task_word_counts(codes, one_task, 1)[0]
    return task_value_counts(codes, one_task, 1, offsets)[0]


def task_value_counts(
    codes: np.ndarray, task: np.ndarray, n_tasks: int, offsets: np.ndarray
) -> np.ndarray:
    """Counts of each (task, feature value), shape (n_tasks, n_values_total).

    Examples
    --------
    >>> codes = np.array([[0, 2], [1, -1], [0, 0]])
    >>> task_value_counts(codes, np.array([0, 0, 1]), 2, np.array([0, 2, 5])).tolist()
    [[1, 1, 0, 0, 1], [1, 0, 1, 0, 0]]
    """
    counts = np.zeros((n_tasks, int(offsets[-1])), dtype=np.int64)
    present = codes >= 0
    columns = (codes + offsets[:-1])[present]
    rows = np.broadcast_to(task[:, None], codes.shape)[present]
    np.add.at(counts, (rows, columns), 1)
    return counts


def regression_design(
    codes, offsets: np.ndarray, task: np.ndarray, n_tasks: int, numeric: np.ndarray
):
    """The predicting regressions' design of rows: one-hot features, a one-hot of the task
    and the numeric columns (:func:`~clusterednb.logistic.solvers.cluster_weighted.sparse_design`),
    or of documents (``codes`` sparse word counts) the counts and the task's one-hot
    (:func:`~clusterednb.logistic.documents.document_design`). Sparse, shape (n_rows, n_columns).

    Examples
    --------
    >>> regression_design(sparse.csr_matrix([[2, 0]]), np.array([0, 2]), np.array([1]), 2,
    ...                   np.zeros((1, 0))).toarray().tolist()
    [[2.0, 0.0, 0.0, 1.0]]
    """
    if sparse.issparse(codes):
        return document_design(codes, task, n_tasks)
    return sparse_design(codes, offsets, task, n_tasks, numeric)
