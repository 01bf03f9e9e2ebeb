"""Sigmoid (Platt) recalibration of a two-class multi-task model, learnt on its training rows.

Naive Bayes multiplies one likelihood per feature as if the features were independent; when
they are correlated it counts the same evidence several times and its log-odds are too far
from 0 (on landmine about 3.5 times too far). The ranking within a task can still be good,
but decisions under unequal costs — which threshold the probability — are not: with false
positives 256 times dearer than false negatives, Clustered NB lost 1.19 times as much as
No-Sharing (BENCHMARKS.md, protocol A).

The fix learns ``P(y = 1 | z) = σ(a z + b)`` on ``z``, the model's own log-odds, where ``z``
of every labelled training row comes from a fit that did not see it: each task's labelled
rows are split at random into two folds, the model (same settings, same schema) is fitted on
one fold of every task and predicts the other. The unlabelled rows join both fits. With
``a > 0`` the map is increasing, so the ranking of rows — AUC — is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.special import log_expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from clusterednb.exceptions import CNBError

CALIBRATIONS = (None, "sigmoid")
N_FOLDS = 2
IDENTITY = np.array([1.0, 0.0])
PLATT_C = 1e4  # nearly unpenalised: two parameters, many rows
MIN_ROWS_PER_CLASS = 5
"""Fewer held-out labels of either class than this, and the map stays the identity: two
parameters learnt from a handful of answers could flatten every probability to the base
rate (a new organisation's first answers)."""


def calibrated_log_proba(log_proba: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Log probabilities of two classes after the map ``z → a z + b`` of the log-odds.

    Parameters
    ----------
    log_proba : ndarray of shape (n_rows, 2)
    coefficients : ndarray of shape (2,)
        ``(a, b)``.

    Returns
    -------
    ndarray of shape (n_rows, 2)

    Examples
    --------
    Halving log-odds of log 9 (P = 0.9) gives log 3 (P = 0.75):

    >>> out = calibrated_log_proba(np.log([[0.1, 0.9]]), np.array([0.5, 0.0]))
    >>> np.exp(out).round(6).tolist()
    [[0.25, 0.75]]
    """
    slope, intercept = coefficients
    log_odds = slope * (log_proba[:, 1] - log_proba[:, 0]) + intercept
    return np.column_stack([log_expit(-log_odds), log_expit(log_odds)])


def task_folds(tasks: np.ndarray, labelled: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fold (0 or 1) of every row: each task's labelled rows split at random into halves
    (the odd one out to a random fold); -1 for an unlabelled row.

    Examples
    --------
    >>> folds = task_folds(np.array(list("aaaabbb")), np.ones(7, bool), np.random.default_rng(0))
    >>> np.bincount(folds[:4]).tolist(), sorted(np.bincount(folds[4:], minlength=2).tolist())
    ([2, 2], [1, 2])
    """
    folds = np.full(tasks.size, -1)
    for _, rows in pd.Series(tasks[labelled]).groupby(tasks[labelled]).indices.items():
        positions = np.flatnonzero(labelled)[rows]
        order = rng.permutation(positions)
        first = order.size // 2 + (rng.random() < 0.5) * (order.size % 2)
        folds[order[:first]] = 0
        folds[order[first:]] = 1
    return folds


def take_rows(X: Any, rows: np.ndarray) -> Any:
    """The rows at positions ``rows`` of a DataFrame, an array or a sparse matrix.

    Examples
    --------
    >>> take_rows(pd.DataFrame({"a": [1, 2, 3]}), np.array([2, 0]))["a"].tolist()
    [3, 1]
    """
    return X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]


def fit_sigmoid(estimator: Any, X: Any, y: Any, tasks: np.ndarray, rng: np.random.Generator):
    """``(a, b)`` of the sigmoid map learnt from out-of-fold log-odds of ``estimator``'s
    training rows (see the module); :data:`IDENTITY` when the labelled rows hold fewer than
    :data:`MIN_ROWS_PER_CLASS` of either class (then no fold is fitted).

    Parameters
    ----------
    estimator : fitted two-class multi-task estimator
        Its settings and ``schema_`` are copied into the fold fits (without calibration).
    X : DataFrame, ndarray or sparse matrix of shape (n_rows, ...)
    y : array-like of shape (n_rows,)
        Labels; missing (NaN/None) for an unlabelled row.
    tasks : ndarray of shape (n_rows,)
    rng : numpy.random.Generator
        Draws the folds.

    Returns
    -------
    ndarray of shape (2,)

    Examples
    --------
    >>> from clusterednb import ClusteredNB
    >>> from clusterednb.examples import naive_bayes as toy
    >>> X, y, tasks = toy.colour_rows()
    >>> model = ClusteredNB(inference="exact").fit(X, y, tasks)
    >>> fit_sigmoid(model, X, y, np.asarray(tasks), np.random.default_rng(0)).tolist()
    [1.0, 0.0]

    Nine answers, four of one class: too few to learn two parameters, so the identity.
    """
    classes = list(estimator.classes_)
    if len(classes) != 2:
        raise CNBError(f"calibration='sigmoid' needs two classes, got {len(classes)}")
    labels = pd.Series(np.asarray(y, dtype=object))
    labelled = labels.notna().to_numpy()
    truth = (labels[labelled] == classes[1]).to_numpy()
    if min(truth.sum(), (~truth).sum()) < MIN_ROWS_PER_CLASS:
        return IDENTITY.copy()
    folds = task_folds(np.asarray(tasks), labelled, rng)
    log_odds = np.zeros(labels.size)
    for fold in range(N_FOLDS):
        held = np.flatnonzero(folds == fold)
        seen = np.flatnonzero(folds != fold)  # the other fold and every unlabelled row
        part = clone(estimator).set_params(
            calibration=None, schema=estimator.schema_, task_column=None
        )
        if "progress" in part.get_params():
            part.set_params(progress=False)
        if hasattr(estimator, "transductive_temperature_"):  # chosen once, not per fold
            part.set_params(transductive_temperature=estimator.selection_temperature())
        part.fit(take_rows(X, seen), labels.iloc[seen].to_numpy(), np.asarray(tasks)[seen])
        log_proba = part.predict_log_proba(take_rows(X, held), np.asarray(tasks)[held])
        log_odds[held] = log_proba[:, 1] - log_proba[:, 0]
    return platt_coefficients(log_odds[labelled], truth)


def platt_coefficients(log_odds: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``(a, b)`` minimising the cross-entropy of ``σ(a z + b)`` against Platt's smoothed
    targets ``(N₊ + 1) / (N₊ + 2)`` for a positive row and ``1 / (N₋ + 2)`` for a negative
    one, which keep ``a`` finite when the classes are separable (a few rows).

    Parameters
    ----------
    log_odds : ndarray of shape (n_rows,)
    truth : ndarray of shape (n_rows,), bool

    Returns
    -------
    ndarray of shape (2,)

    Examples
    --------
    Separable rows: the slope stays finite.

    >>> a, b = platt_coefficients(np.array([-2.0, -1.0, 1.0, 2.0]), np.array([0, 0, 1, 1], bool))
    >>> bool(0 < a < 10), abs(round(float(b), 6))  # symmetric rows: no intercept
    (True, 0.0)
    """
    n_positive = int(truth.sum())
    n_negative = truth.size - n_positive
    target = np.where(truth, (n_positive + 1) / (n_positive + 2), 1 / (n_negative + 2))
    z = np.concatenate([log_odds, log_odds])[:, None]
    y = np.concatenate([np.ones(truth.size), np.zeros(truth.size)])
    weight = np.concatenate([target, 1 - target])
    platt = LogisticRegression(C=PLATT_C, tol=1e-10, max_iter=1000)
    platt.fit(z, y, sample_weight=weight)
    return np.array([platt.coef_[0, 0], platt.intercept_[0]])
