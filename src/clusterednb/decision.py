"""Bayes decisions under a loss: loss matrices, the decision rule, and the thesis' ``L_n``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError


@dataclass(frozen=True)
class LossMatrix:
    """Loss ``L[y, a]`` of taking action ``a`` (predicting class ``a``) when the truth is ``y``.

    Rows and columns follow the estimator's ``classes_`` order.

    Parameters
    ----------
    matrix : array-like of shape (n_classes, n_classes)
        Finite losses.

    Examples
    --------
    >>> LossMatrix.binary(cost_false_positive=1.0, cost_false_negative=4.0).matrix.tolist()
    [[0.0, 1.0], [4.0, 0.0]]
    """

    matrix: np.ndarray

    def __post_init__(self) -> None:
        matrix = np.array(self.matrix, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
            raise CNBError(
                f"a loss matrix must be square with at least 2 classes, got {matrix.shape}"
            )
        if not np.isfinite(matrix).all():
            raise CNBError("a loss matrix must hold finite numbers")
        object.__setattr__(self, "matrix", matrix)

    @property
    def n_classes(self) -> int:
        """Number of classes (and of actions)."""
        return int(self.matrix.shape[0])

    @classmethod
    def zero_one(cls, n_classes: int) -> LossMatrix:
        """The symmetric 0-1 loss: the decision is the most probable class."""
        return cls(1.0 - np.eye(n_classes))

    @classmethod
    def binary(
        cls,
        cost_false_positive: float,
        cost_false_negative: float,
        cost_true_positive: float = 0.0,
        cost_true_negative: float = 0.0,
    ) -> LossMatrix:
        """Binary loss with class 0 negative and class 1 positive."""
        return cls(
            np.array(
                [
                    [cost_true_negative, cost_false_positive],
                    [cost_false_negative, cost_true_positive],
                ]
            )
        )

    @classmethod
    def asymmetric(cls, n: float) -> LossMatrix:
        """The thesis' ``L_n`` (eq. 4.16): a false positive costs 1, a false negative ``2**n``."""
        return cls.binary(cost_false_positive=1.0, cost_false_negative=2.0**n)


def as_loss_matrix(loss: Any, n_classes: int) -> LossMatrix:
    """Accept a :class:`LossMatrix` or an array and check it fits ``n_classes``."""
    matrix = loss if isinstance(loss, LossMatrix) else LossMatrix(np.asarray(loss))
    if matrix.n_classes != n_classes:
        raise CNBError(
            f"the loss matrix is {matrix.n_classes}x{matrix.n_classes} but there are "
            f"{n_classes} classes"
        )
    return matrix


def expected_loss(proba: np.ndarray, loss: LossMatrix) -> np.ndarray:
    """Posterior expected loss ``Σ_y L[y, a] P(y | x)`` of every action.

    Parameters
    ----------
    proba : ndarray of shape (n_rows, n_classes)
    loss : LossMatrix

    Returns
    -------
    ndarray of shape (n_rows, n_classes)
    """
    return proba @ loss.matrix


def bayes_decision(proba: np.ndarray, loss: LossMatrix) -> np.ndarray:
    """The action of least expected loss for each row (ties go to the lower class index).

    Parameters
    ----------
    proba : ndarray of shape (n_rows, n_classes)
    loss : LossMatrix

    Returns
    -------
    ndarray of shape (n_rows,), dtype int64
        Class index of the chosen action.
    """
    return np.argmin(expected_loss(proba, loss), axis=1).astype(np.int64)


def binary_threshold(
    cost_false_positive: float,
    cost_false_negative: float,
    cost_true_positive: float = 0.0,
    cost_true_negative: float = 0.0,
) -> float:
    """Probability threshold of the binary Bayes decision.

    Predict the positive class iff ``P(y = 1 | x) > Δ1 / (Δ0 + Δ1)`` where
    ``Δ1 = fp − tn`` and ``Δ0 = fn − tp`` must both be positive.

    Examples
    --------
    >>> binary_threshold(1.0, 2.0**3)  # L_3: 1 / (1 + 2**3)
    0.1111111111111111
    """
    delta_1 = cost_false_positive - cost_true_negative
    delta_0 = cost_false_negative - cost_true_positive
    if delta_1 <= 0 or delta_0 <= 0:
        raise CNBError(
            "a threshold needs a false positive dearer than a true negative and a false "
            f"negative dearer than a true positive; got Δ1={delta_1}, Δ0={delta_0}"
        )
    return delta_1 / (delta_0 + delta_1)


def realised_loss(y_true: np.ndarray, actions: np.ndarray, loss: LossMatrix) -> np.ndarray:
    """Loss ``L[y_true, action]`` of each row's decision (class indices)."""
    return loss.matrix[np.asarray(y_true), np.asarray(actions)]
