"""Logistic-regression baselines of the protocols: what a practitioner would try first.

One-hot regressions per task (``lr-task``), pooled over tasks with each task's intercept
(``lr-pooled``, and ``lr-pooled+raw`` with the continuous features' raw values), and partial
pooling by feature augmentation (``lr-hier``). Every function trains on one split and returns
``P(y = 1)`` for the test rows; with labels of one class only, the add-one class frequency.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.preprocessing import OneHotEncoder

HIER_GRID = tuple((C, s) for C in (0.1, 1.0, 10.0) for s in (0.3, 1.0, 3.0))
HIER_TOL = 1e-6
"""``lr-hier``'s Newton-CG tolerance. L-BFGS at scikit-learn's default ``tol=1e-4`` stopped
far from the optimum on MovieLens' 45 000 augmented columns (the fits of the grid then
depended on where they started); Newton-CG at 1e-6 reaches it in 5-8 steps."""
RAW_SUFFIX = "__raw"


def raw_column(feature: str) -> str:
    """The column holding a discretised feature's raw values (see ``lr-pooled+raw``).

    Examples
    --------
    >>> raw_column("temperature")
    'temperature__raw'
    """
    return f"{feature}{RAW_SUFFIX}"


def pooled_logistic_with_raw(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str]
) -> np.ndarray:
    """``lr-pooled`` with each continuous feature's raw value (standardised on the training
    rows) beside its one-hot bins; without continuous features it is ``lr-pooled``.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["a", "a", "b", "b"], "label": [1, 0, 1, 0],
    ...                       "f": ["x", "y", "x", "y"], "f__raw": [1.0, 3.0, 1.5, 2.5]})
    >>> test = pd.DataFrame({"task": ["a", "b"], "f": ["x", "y"], "f__raw": [0.5, 4.0]})
    >>> p1 = pooled_logistic_with_raw(train, test, ["f"])
    >>> bool(p1[0] > 0.5 > p1[1])  # x and a small value: positive
    True
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    raw = [raw_column(f) for f in features if raw_column(f) in train.columns]
    columns = [*features, "task"]
    encoder = OneHotEncoder(handle_unknown="ignore")
    design = encoder.fit_transform(train[columns].astype(str))
    query = encoder.transform(test[columns].astype(str))
    if raw:
        values = train[raw].to_numpy(dtype=float)
        centre, scale = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
        scale[~(scale > 0)] = 1.0

        def standardised(frame: pd.DataFrame) -> np.ndarray:
            return np.nan_to_num((frame[raw].to_numpy(dtype=float) - centre) / scale)

        design = sparse.hstack([design, standardised(train)]).tocsr()
        query = sparse.hstack([query, standardised(test)]).tocsr()
    model = LogisticRegression(C=1.0, max_iter=1000)
    return model.fit(design, y_train).predict_proba(query)[:, 1]


def tuned_hierarchical_logistic(
    train: pd.DataFrame, test: pd.DataFrame, features: list[str], seed: int
) -> np.ndarray:
    """``lr-hier`` with ``C`` and the deviation scale chosen by inner validation on the
    training tasks: every training task with at least 4 labelled rows that is not a test
    task lends half of them (drawn with ``seed``); each pair of :data:`HIER_GRID` is fitted
    on the rest and scored by log-loss on them; the best is refitted on all training rows.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["a", "a", "b", "b"], "label": [1, 0, 1, 0],
    ...                       "f": ["x", "y", "x", "y"], "f__raw": [1.0, 3.0, 1.5, 2.5]})
    >>> test = pd.DataFrame({"task": ["a", "b"], "f": ["x", "y"], "f__raw": [0.5, 4.0]})
    >>> p1 = tuned_hierarchical_logistic(train, test, ["f"], seed=0)
    >>> p1.shape, bool(p1[0] > p1[1])
    ((2,), True)
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    rng = np.random.default_rng([seed, 7])
    held = []
    test_tasks = set(pd.unique(test["task"]).tolist())
    for task, rows in train.groupby("task").indices.items():
        if task not in test_tasks and rows.size >= 4:
            held.append(rng.choice(rows, size=rows.size // 2, replace=False))
    augmented = _Augmented(train, features)
    everything = augmented.encode(train)
    best, start = (1.0, 1.0), None
    if held:
        is_held = np.zeros(len(train), dtype=bool)
        is_held[np.concatenate(held)] = True
        inner_train, inner_test = everything.take(~is_held), everything.take(is_held)
        if np.unique(inner_test.label).size == 2 and np.unique(inner_train.label).size == 2:
            losses, fits = {}, {}
            for C, scale in sorted(HIER_GRID, key=lambda pair: (pair[1], pair[0])):
                model = augmented.fit(inner_train, C, scale, start)
                p1 = model.predict_proba(augmented.design(inner_test, scale))[:, 1]
                losses[(C, scale)] = log_loss(
                    inner_test.label, np.column_stack([1 - p1, p1]), labels=[0, 1]
                )
                fits[(C, scale)] = start = (model, scale)
            best = min(losses, key=losses.__getitem__)
            start = fits[best]
    model = augmented.fit(everything, *best, start)
    return model.predict_proba(augmented.design(augmented.encode(test), best[1]))[:, 1]


class _Encoded(NamedTuple):
    """Rows one-hot encoded once: ``shared`` (n_rows, n_columns), the index of each row's
    task among the training tasks ``task`` (n_rows,; -1 for an unknown task) and its
    ``label`` (n_rows,; None for test rows)."""

    shared: sparse.csr_matrix
    task: np.ndarray
    label: np.ndarray | None

    def take(self, mask: np.ndarray) -> _Encoded:
        """The rows where the boolean ``mask`` (n_rows,) holds, in order."""
        label = None if self.label is None else self.label[mask]
        return _Encoded(self.shared[mask], self.task[mask], label)


class _Augmented:
    """The one-hot encoder and task index of one training set, for many fits of ``lr-hier``
    (its inner validation): every fit's columns mean the same, so each can start from the
    last one's weights (scikit-learn's ``warm_start``), which cuts Newton's steps. Rows are
    encoded once (:meth:`encode`); subsets of them are slices (:meth:`_Encoded.take`)."""

    def __init__(self, train: pd.DataFrame, features: list[str]) -> None:
        self.features = features
        self.encoder = OneHotEncoder(handle_unknown="ignore").fit(train[features].astype(str))
        self.task_ids = pd.Index(pd.unique(train["task"]))

    def encode(self, rows: pd.DataFrame) -> _Encoded:
        """The one-hot features, task index and (if present) labels of ``rows``."""
        label = rows["label"].to_numpy() if "label" in rows.columns else None
        return _Encoded(
            self.encoder.transform(rows[self.features].astype(str)).tocsr(),
            self.task_ids.get_indexer(rows["task"]),
            label,
        )

    def design(self, rows: _Encoded, scale: float) -> sparse.csr_matrix:
        """:func:`augment` of the encoded ``rows`` (unknown tasks get the shared part only)."""
        return augment(rows.shared, rows.task, self.task_ids.size, scale)

    def fit(
        self,
        rows: _Encoded,
        C: float,
        scale: float,
        start: tuple[LogisticRegression, float] | None,
    ) -> LogisticRegression:
        """The MAP fit on the encoded, labelled ``rows``, started from ``start`` (a fit and
        its scale) if given: its deviation weights are rescaled so that they make the same
        deviations at ``scale``."""
        model = LogisticRegression(
            C=C, solver="newton-cg", tol=HIER_TOL, max_iter=1000, warm_start=start is not None
        )
        if start is not None:
            earlier, earlier_scale = start
            coef = earlier.coef_.copy()
            n_shared = len(self.encoder.get_feature_names_out())
            coef[:, n_shared:] *= earlier_scale / scale
            model.coef_, model.intercept_ = coef, earlier.intercept_.copy()
        return model.fit(self.design(rows, scale), rows.label)


def class_frequency(y_train: np.ndarray, n_test: int) -> np.ndarray | None:
    """With one class only, the add-one frequency of class 1 for every test row; else None.

    Examples
    --------
    >>> class_frequency(np.array([1, 1, 1]), 2).tolist()  # one class only: (3 + 1) / (3 + 2)
    [0.8, 0.8]
    >>> class_frequency(np.array([0, 1]), 2) is None
    True
    """
    if np.unique(y_train).size >= 2:
        return None
    return np.full(n_test, (y_train.sum() + 1.0) / (y_train.size + 2.0))


def one_hot(index: np.ndarray, size: int) -> sparse.csr_matrix:
    """Indicator rows of ``index`` (a -1 row stays empty), shape (len(index), size).

    Examples
    --------
    >>> one_hot(np.array([1, -1, 0]), 2).toarray().tolist()
    [[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    """
    known = index >= 0
    return sparse.csr_matrix(
        (np.ones(known.sum()), (np.flatnonzero(known), index[known])), shape=(index.size, size)
    )


def with_task_one_hot(X: Any, task: np.ndarray, n_tasks: int) -> sparse.csr_matrix:
    """``[X, e_task]``: the rows of ``X`` followed by their task's indicator (``lr-pooled``'s
    design on documents; a task of -1 gets no indicator).

    Examples
    --------
    >>> X = sparse.csr_matrix([[2.0], [1.0]])
    >>> with_task_one_hot(X, np.array([1, -1]), 2).toarray().tolist()
    [[2.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    return sparse.hstack([X, one_hot(task, n_tasks)]).tocsr()


def sparse_logistic(
    X_train: Any, y_train: np.ndarray, X_test: Any, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Logistic regression on sparse counts (rows weighted by ``sample_weight``, default 1);
    one class only: its add-one frequency.

    Examples
    --------
    >>> from scipy import sparse
    >>> X = sparse.csr_matrix([[3, 0], [0, 2], [2, 0], [0, 4]])
    >>> p1 = sparse_logistic(X, np.array([1, 0, 1, 0]), sparse.csr_matrix([[1, 0], [0, 1]]))
    >>> bool(p1[0] > 0.5 > p1[1])
    True
    """
    if (constant := class_frequency(y_train, X_test.shape[0])) is not None:
        return constant
    model = LogisticRegression(C=1.0, max_iter=2000)
    return model.fit(X_train, y_train, sample_weight=sample_weight).predict_proba(X_test)[:, 1]


def hierarchical_logistic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: list[str],
    C: float = 1.0,
    deviation_scale: float = 1.0,
) -> np.ndarray:
    """Partial-pooling logistic regression: shared weights plus each task's deviations.

    ``logit P(y = 1 | x, u) = b + (w + δ_u) · z(x) + c_u`` with ``z`` the one-hot features.
    The MAP fit under ``w ~ N(0, C I)``, ``(δ_u, c_u) ~ N(0, s² C I)`` is an L2-penalised
    logistic regression on the augmented design ``[z, s · z ⊗ e_u, s · e_u]`` (Daumé's
    feature augmentation), fitted by scikit-learn; ``s = deviation_scale``. A task with no
    training rows gets the shared part only. It is the point-estimate counterpart of a
    mixed-effects logistic regression with random intercepts and slopes (statsmodels'
    ``BinomialBayesMixedGLM`` took 260 s per landmine split; this takes well under 1 s).

    Returns
    -------
    ndarray of shape (len(test),)
        ``P(y = 1)`` of each test row.

    Examples
    --------
    >>> train = pd.DataFrame({"task": ["a", "a", "b", "b"], "label": [1, 0, 1, 0],
    ...                       "f": ["x", "y", "x", "y"], "f__raw": [1.0, 3.0, 1.5, 2.5]})
    >>> test = pd.DataFrame({"task": ["a", "b"], "f": ["x", "y"], "f__raw": [0.5, 4.0]})
    >>> shared_only = hierarchical_logistic(train, test, ["f"], deviation_scale=0.0)
    >>> bool(shared_only[0] > 0.5 > shared_only[1])
    True
    """
    y_train = train["label"].to_numpy()
    if (constant := class_frequency(y_train, len(test))) is not None:
        return constant
    augmented = _Augmented(train, features)
    model = augmented.fit(augmented.encode(train), C, deviation_scale, None)
    return model.predict_proba(augmented.design(augmented.encode(test), deviation_scale))[:, 1]


def augment(
    shared: sparse.spmatrix, task: np.ndarray, n_tasks: int, scale: float
) -> sparse.csr_matrix:
    """``[z, s · z ⊗ e_u, s · e_u]`` as a sparse matrix; rows of unknown tasks (-1) get zeros.

    Examples
    --------
    Two rows of one feature; the second row's task is unknown (no deviation columns):

    >>> from scipy import sparse
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


def one_hot_logistic(
    X_train: pd.DataFrame, y_train: np.ndarray, X_test: pd.DataFrame
) -> np.ndarray:
    """One-hot logistic regression; with one class only, the add-one class frequency.

    Examples
    --------
    >>> X = pd.DataFrame({"f": ["x", "y", "x", "y"]})
    >>> p1 = one_hot_logistic(X, np.array([1, 0, 1, 0]), pd.DataFrame({"f": ["x", "z"]}))
    >>> bool(p1[0] > 0.5), round(float(p1[1]), 2)  # an unseen value: the intercept alone
    (True, 0.5)
    """
    if (constant := class_frequency(y_train, len(X_test))) is not None:
        return constant
    encoder = OneHotEncoder(handle_unknown="ignore")
    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit(encoder.fit_transform(X_train.astype(str)), y_train)
    return model.predict_proba(encoder.transform(X_test.astype(str)))[:, 1]
