"""``lr-hier``: partial-pooling logistic regression by feature augmentation, with its ``C``
and deviation scale chosen by inner validation on the training tasks.

``logit P(y = 1 | x, u) = b + (w + δ_u) · z(x) + c_u``, ``z`` the shared features (one-hot
categories, or a document's word counts). The MAP fit under ``w ~ N(0, C I)``,
``(δ_u, c_u) ~ N(0, s² C I)`` is an L2-penalised logistic regression on the augmented design
``[z, s · z ⊗ e_u, s · e_u]`` (Daumé's feature augmentation), fitted by scikit-learn's
Newton-CG. It is the point-estimate counterpart of a mixed-effects logistic regression with
random intercepts and slopes (statsmodels' ``BinomialBayesMixedGLM`` took 260 s per landmine
split; this takes well under 1 s).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.preprocessing import OneHotEncoder

from clusterednb.evaluation.models.baselines import class_frequency

HIER_GRID = tuple((C, s) for C in (0.1, 1.0, 10.0) for s in (0.3, 1.0, 3.0))
HIER_TOL = 1e-6
"""``lr-hier``'s Newton-CG tolerance. L-BFGS at scikit-learn's default ``tol=1e-4`` stopped
far from the optimum on MovieLens' 45 000 augmented columns (the fits of the grid then
depended on where they started); Newton-CG at 1e-6 reaches it in 5-8 steps."""
MIN_LENDING_ROWS = 4


class TaskRows(NamedTuple):
    """Rows of many tasks in the form the fits read.

    Attributes
    ----------
    shared : sparse matrix of shape (n_rows, n_shared)
        The features every task shares (``z``).
    task : ndarray of shape (n_rows,)
        Each row's task among the training tasks, -1 for a task not trained on.
    label : ndarray of shape (n_rows,), optional
        0/1 labels (None for rows to predict).
    """

    shared: Any
    task: np.ndarray
    label: np.ndarray | None = None

    def take(self, mask: np.ndarray) -> TaskRows:
        """The rows where the boolean ``mask`` (n_rows,) holds, in order.

        Examples
        --------
        >>> rows = TaskRows(sparse.csr_matrix(np.eye(3)), np.array([0, 1, 1]), np.array([1, 0, 1]))
        >>> part = rows.take(np.array([False, True, True]))
        >>> part.shared.shape, part.task.tolist(), part.label.tolist()
        ((2, 3), [1, 1], [0, 1])
        """
        label = None if self.label is None else self.label[mask]
        return TaskRows(self.shared[mask], self.task[mask], label)


def augment(
    shared: sparse.spmatrix, task: np.ndarray, n_tasks: int, scale: float
) -> sparse.csr_matrix:
    """``[z, s · z ⊗ e_u, s · e_u]`` as a sparse matrix; rows of unknown tasks (-1) get zeros.

    Examples
    --------
    Two rows of one feature; the second row's task is unknown (no deviation columns):

    >>> augment(sparse.csr_matrix([[1.0], [1.0]]), np.array([1, -1]), 2, 0.5).toarray().tolist()
    [[1.0, 0.0, 0.0, 0.5, 0.5], [1.0, 0.0, 0.0, 0.0, 0.0]]
    """
    with_bias = sparse.hstack([shared, np.ones((shared.shape[0], 1))]).tocoo()
    width = with_bias.shape[1]
    known = task[with_bias.row] >= 0
    own = sparse.csr_matrix(
        (
            scale * with_bias.data[known],
            (with_bias.row[known], task[with_bias.row[known]] * width + with_bias.col[known]),
        ),
        shape=(shared.shape[0], n_tasks * width),
    )
    return sparse.hstack([shared, own]).tocsr()


class PartialPooling:
    """MAP fits of the augmented regression for ``n_tasks`` training tasks.

    Every fit's columns mean the same, so a fit can start from another's weights
    (scikit-learn's ``warm_start``), which cuts Newton's steps along the tuning grid.

    Examples
    --------
    >>> rows = TaskRows(sparse.csr_matrix([[1.0], [0.0], [1.0], [0.0]]), np.array([0, 0, 1, 1]),
    ...                 np.array([1, 0, 1, 0]))
    >>> pooling = PartialPooling(n_tasks=2)
    >>> model = pooling.fit(rows, C=1.0, scale=1.0)
    >>> p1 = model.predict_proba(pooling.design(rows, 1.0))[:, 1]
    >>> bool(p1[0] > 0.5 > p1[1])
    True
    """

    def __init__(self, n_tasks: int) -> None:
        self.n_tasks = n_tasks

    def design(self, rows: TaskRows, scale: float) -> sparse.csr_matrix:
        """:func:`augment` of ``rows`` (unknown tasks get the shared part only)."""
        return augment(rows.shared, rows.task, self.n_tasks, scale)

    def fit(
        self,
        rows: TaskRows,
        C: float,
        scale: float,
        start: tuple[LogisticRegression, float] | None = None,
    ) -> LogisticRegression:
        """The MAP fit on the labelled ``rows``, started from ``start`` (a fit and its scale)
        if given: its deviation weights are rescaled so that they make the same deviations at
        ``scale``."""
        model = LogisticRegression(
            C=C, solver="newton-cg", tol=HIER_TOL, max_iter=1000, warm_start=start is not None
        )
        if start is not None:
            earlier, earlier_scale = start
            coef = earlier.coef_.copy()
            coef[:, rows.shared.shape[1] :] *= earlier_scale / scale
            model.coef_, model.intercept_ = coef, earlier.intercept_.copy()
        return model.fit(self.design(rows, scale), rows.label)


def tuned_partial_pooling(train: TaskRows, test: TaskRows, n_tasks: int, seed: int) -> np.ndarray:
    """``P(y = 1)`` of the test rows by the augmented regression, ``C`` and the deviation
    scale chosen by inner validation on the training tasks.

    Every training task with at least :data:`MIN_LENDING_ROWS` labelled rows that is not a
    test task lends half of them (drawn with ``seed``, tasks in order of their number); each
    pair of :data:`HIER_GRID` is fitted on the rest and scored by log-loss on them; the best is
    refitted on all training rows (from the validation fit's weights). Without lending tasks,
    or with one class among the lent or kept rows, ``C = s = 1``; with one class among all the
    training labels, the add-one frequency of class 1.

    Parameters
    ----------
    train : TaskRows
        Labelled training rows (tasks numbered ``0 … n_tasks - 1``).
    test : TaskRows
        Rows to predict (task -1: a task not trained on).
    n_tasks : int
    seed : int

    Returns
    -------
    ndarray of shape (n_test_rows,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> shared = sparse.csr_matrix(rng.integers(0, 2, (40, 3)).astype(float))
    >>> task = np.repeat(np.arange(4), 10)
    >>> label = (shared[:, 0].toarray().ravel() > 0).astype(int)
    >>> p1 = tuned_partial_pooling(TaskRows(shared, task, label),
    ...                            TaskRows(sparse.csr_matrix([[1.0, 0, 0], [0, 0, 0]]),
    ...                                     np.array([0, 0])), 4, seed=0)
    >>> bool(p1[0] > 0.5 > p1[1])
    True
    """
    if (constant := class_frequency(train.label, test.task.size)) is not None:
        return constant
    rng = np.random.default_rng([seed, 7])
    test_tasks = set(np.unique(test.task).tolist())
    held = []
    for task in range(n_tasks):
        rows = np.flatnonzero(train.task == task)
        if task not in test_tasks and rows.size >= MIN_LENDING_ROWS:
            held.append(rng.choice(rows, size=rows.size // 2, replace=False))
    pooling = PartialPooling(n_tasks)
    best, start = (1.0, 1.0), None
    if held:
        is_held = np.zeros(train.task.size, dtype=bool)
        is_held[np.concatenate(held)] = True
        kept, lent = train.take(~is_held), train.take(is_held)
        if np.unique(lent.label).size == 2 and np.unique(kept.label).size == 2:
            losses, fits = {}, {}
            for C, scale in sorted(HIER_GRID, key=lambda pair: (pair[1], pair[0])):
                model = pooling.fit(kept, C, scale, start)
                p1 = model.predict_proba(pooling.design(lent, scale))[:, 1]
                losses[(C, scale)] = log_loss(
                    lent.label, np.column_stack([1 - p1, p1]), labels=[0, 1]
                )
                fits[(C, scale)] = start = (model, scale)
            best = min(losses, key=losses.__getitem__)
            start = fits[best]
    model = pooling.fit(train, *best, start)
    return model.predict_proba(pooling.design(test, best[1]))[:, 1]


def one_hot_task_rows(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str]
) -> tuple[TaskRows, TaskRows, int]:
    """The one-hot training and test rows of a split (categories of the training rows; the
    tasks numbered in sorted order) and the number of training tasks.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["b", "a"], "label": [1, 0], "f": ["x", "y"]})
    >>> test = pd.DataFrame({"task": ["a", "c"], "f": ["y", "z"]})
    >>> fitted, asked, n_tasks = one_hot_task_rows(train, test, ["f"])
    >>> fitted.task.tolist(), asked.task.tolist(), asked.shared.toarray().tolist(), n_tasks
    ([1, 0], [0, -1], [[0.0, 1.0], [0.0, 0.0]], 2)
    """
    encoder = OneHotEncoder(handle_unknown="ignore").fit(train[features].astype(str))
    task_ids = pd.Index(np.unique(train["task"].to_numpy()))

    def rows(frame: pd.DataFrame, label: np.ndarray | None) -> TaskRows:
        shared = encoder.transform(frame[features].astype(str)).tocsr()
        return TaskRows(shared, task_ids.get_indexer(frame["task"]), label)

    return rows(train, train["label"].to_numpy()), rows(test, None), task_ids.size


def hierarchical_logistic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    C: float = 1.0,
    deviation_scale: float = 1.0,
) -> np.ndarray:
    """``lr-hier-fixed``: the augmented regression on one-hot features at fixed ``C`` and
    deviation scale ``s``; a task with no training rows gets the shared part only.

    Returns
    -------
    ndarray of shape (len(test),)
        ``P(y = 1)`` of each test row.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["a", "a", "b", "b"], "label": [1, 0, 1, 0],
    ...                       "f": ["x", "y", "x", "y"]})
    >>> test = pd.DataFrame({"task": ["a", "b"], "f": ["x", "y"]})
    >>> shared_only = hierarchical_logistic(train, test, ["f"], deviation_scale=0.0)
    >>> bool(shared_only[0] > 0.5 > shared_only[1])
    True
    """
    if (constant := class_frequency(train["label"].to_numpy(), len(test))) is not None:
        return constant
    fitted, asked, n_tasks = one_hot_task_rows(train, test, features)
    pooling = PartialPooling(n_tasks)
    model = pooling.fit(fitted, C, deviation_scale)
    return model.predict_proba(pooling.design(asked, deviation_scale))[:, 1]


def tuned_hierarchical_logistic(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str], seed: int
) -> np.ndarray:
    """``lr-hier`` on one-hot features: :func:`tuned_partial_pooling` (with one class only,
    its add-one frequency).

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["a", "a", "b", "b"], "label": [1, 0, 1, 0],
    ...                       "f": ["x", "y", "x", "y"]})
    >>> test = pd.DataFrame({"task": ["a", "b"], "f": ["x", "y"]})
    >>> p1 = tuned_hierarchical_logistic(train, test, ["f"], seed=0)
    >>> p1.shape, bool(p1[0] > p1[1])
    ((2,), True)
    """
    return tuned_partial_pooling(*one_hot_task_rows(train, test, features), seed)
