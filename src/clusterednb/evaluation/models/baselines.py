"""Logistic-regression baselines of the protocols: what a practitioner would try first.

One-hot regressions per task (``lr-task``), pooled over tasks with each task's intercept
(``lr-pooled``, and ``lr-pooled+raw`` with the continuous features' raw values); partial
pooling (``lr-hier``) is :mod:`clusterednb.evaluation.models.partial_pooling`. Every function trains
on one split and returns ``P(y = 1)`` for the test rows; with labels of one class only, the
add-one class frequency.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder

from clusterednb.logistic.solvers.cluster_weighted import one_hot_tasks

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


def with_task_one_hot(X: Any, task: np.ndarray, n_tasks: int) -> sparse.csr_matrix:
    """``[X, e_task]``: the rows of ``X`` followed by their task's indicator (``lr-pooled``'s
    design on documents; a task of -1 gets no indicator).

    Examples
    --------
    >>> X = sparse.csr_matrix([[2.0], [1.0]])
    >>> with_task_one_hot(X, np.array([1, -1]), 2).toarray().tolist()
    [[2.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    return sparse.hstack([X, one_hot_tasks(task, n_tasks)]).tocsr()


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
