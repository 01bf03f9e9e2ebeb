"""Bayes decisions under a loss: loss matrices, the decision rule, and the thesis' ``L_n``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError


@dataclass(frozen=True)
class LossMatrix:
    """Loss ``L[y, a]`` of taking action ``a`` (predicting class ``a``) when the truth is ``y``.

    Rows and columns follow the estimator's ``classes_`` order, except for a matrix built by
    :meth:`binary`, whose rows and columns are (negative, positive) and which an estimator
    places by its ``pos_label`` (see :meth:`for_classes`).

    Parameters
    ----------
    matrix : array-like of shape (n_classes, n_classes)
        Finite losses.
    pos_label : object, optional
        Set by :meth:`binary`: the label that is "positive".
    by_role : bool, default=False
        Set by :meth:`binary`: rows and columns are (negative, positive), not classes.

    Examples
    --------
    >>> LossMatrix.binary(cost_false_positive=1.0, cost_false_negative=4.0).matrix.tolist()
    [[0.0, 1.0], [4.0, 0.0]]
    >>> loss = LossMatrix.binary(1.0, 4.0, pos_label="accept")
    >>> loss.for_classes(["accept", "decline"]).matrix.tolist()  # accept is classes_[0]
    [[0.0, 4.0], [1.0, 0.0]]
    """

    matrix: np.ndarray
    pos_label: Any = None
    by_role: bool = False

    def __post_init__(self) -> None:
        matrix = np.array(self.matrix, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
            raise CNBError(
                f"a loss matrix must be square with at least 2 classes, got {matrix.shape}"
            )
        if not np.isfinite(matrix).all():
            raise CNBError("a loss matrix must hold finite numbers")
        object.__setattr__(self, "matrix", matrix)

    def for_classes(self, classes: Sequence[Any]) -> LossMatrix:
        """The matrix in the order of ``classes`` (an estimator's ``classes_``).

        A matrix built by :meth:`binary` is placed by its ``pos_label``; without one, the
        positive class must be evident: the labels are ``{0, 1}`` or ``{False, True}``.

        Raises
        ------
        CNBError
            The sizes differ, ``pos_label`` is not a class, or it is needed and missing.

        Examples
        --------
        A loss named by roles, placed in an estimator's class order:

        >>> loss = LossMatrix.binary(5.0, 1.0, pos_label="accept")
        >>> loss.for_classes(["accept", "decline"]).matrix.tolist()
        [[0.0, 1.0], [5.0, 0.0]]
        """
        classes = [c.item() if isinstance(c, np.generic) else c for c in classes]
        if self.n_classes != len(classes):
            raise CNBError(
                f"the loss matrix is {self.n_classes}x{self.n_classes} but there are "
                f"{len(classes)} classes"
            )
        if not self.by_role:
            return self
        pos_label = self.pos_label
        if pos_label is None:
            if set(classes) not in ({0, 1}, {False, True}):
                raise CNBError(
                    f"the labels are {classes}: say which is positive with pos_label= (the "
                    "costs of a false positive and a false negative are named after it)"
                )
            pos_label = 1
        if pos_label not in classes:
            raise CNBError(f"pos_label {pos_label!r} is not one of the labels {classes}")
        if classes.index(pos_label) == 1:
            return LossMatrix(self.matrix)
        return LossMatrix(self.matrix[::-1, ::-1])

    @property
    def n_classes(self) -> int:
        """Number of classes (and of actions).

        Examples
        --------
        >>> LossMatrix.zero_one(3).n_classes
        3
        """
        return int(self.matrix.shape[0])

    @classmethod
    def zero_one(cls, n_classes: int) -> LossMatrix:
        """The symmetric 0-1 loss: the decision is the most probable class.

        Examples
        --------
        >>> LossMatrix.zero_one(2).matrix.tolist()
        [[0.0, 1.0], [1.0, 0.0]]
        """
        return cls(1.0 - np.eye(n_classes))

    @classmethod
    def binary(
        cls,
        cost_false_positive: float,
        cost_false_negative: float,
        cost_true_positive: float = 0.0,
        cost_true_negative: float = 0.0,
        pos_label: Any = None,
    ) -> LossMatrix:
        """Binary loss: predicting ``pos_label`` wrongly costs ``cost_false_positive``.

        Parameters
        ----------
        cost_false_positive : float
            Loss of predicting ``pos_label`` when the truth is the other class.
        cost_false_negative : float
            Loss of predicting the other class when the truth is ``pos_label``.
        cost_true_positive, cost_true_negative : float, default=0.0
        pos_label : object, optional
            The positive label; required unless the labels are ``{0, 1}`` or
            ``{False, True}`` (then 1 / True is positive).

        Examples
        --------
        A wrong accept costs five times a wrong decline:

        >>> LossMatrix.binary(cost_false_positive=5.0, cost_false_negative=1.0).matrix.tolist()
        [[0.0, 5.0], [1.0, 0.0]]
        """
        for name, value in (
            (f"false positive (predicting {pos_label!r} wrongly)", cost_false_positive),
            (f"false negative (missing {pos_label!r})", cost_false_negative),
        ):
            if not np.isfinite(value) or value < 0:
                raise CNBError(f"the cost of a {name} must be a finite number >= 0, got {value}")
        return cls(
            np.array(
                [
                    [cost_true_negative, cost_false_positive],
                    [cost_false_negative, cost_true_positive],
                ]
            ),
            pos_label=pos_label,
            by_role=True,
        )

    @classmethod
    def asymmetric(cls, n: float, pos_label: Any = None) -> LossMatrix:
        """The thesis' ``L_n`` (eq. 4.16): a false positive costs 1, a false negative ``2**n``.

        Examples
        --------
        >>> LossMatrix.asymmetric(2).matrix.tolist()  # rows: truth, columns: action
        [[0.0, 1.0], [4.0, 0.0]]
        """
        return cls.binary(cost_false_positive=1.0, cost_false_negative=2.0**n, pos_label=pos_label)


def as_loss_matrix(loss: Any, classes: int | Sequence[Any]) -> LossMatrix:
    """A :class:`LossMatrix` (or an array) in the order of ``classes``.

    Parameters
    ----------
    loss : LossMatrix or array-like of shape (n_classes, n_classes)
    classes : int or sequence
        The estimator's ``classes_`` (or only their number, for a matrix already in order:
        then the positive class of a :meth:`LossMatrix.binary` matrix is the second).

    Examples
    --------
    >>> as_loss_matrix([[0, 1], [4, 0]], ["no", "yes"]).matrix.tolist()
    [[0.0, 1.0], [4.0, 0.0]]
    """
    matrix = loss if isinstance(loss, LossMatrix) else LossMatrix(np.asarray(loss))
    if isinstance(classes, int | np.integer):
        if matrix.n_classes != classes:
            raise CNBError(
                f"the loss matrix is {matrix.n_classes}x{matrix.n_classes} but there are "
                f"{classes} classes"
            )
        return matrix
    return matrix.for_classes(list(classes))


def expected_loss(proba: np.ndarray, loss: LossMatrix) -> np.ndarray:
    """Posterior expected loss ``Σ_y L[y, a] P(y | x)`` of every action.

    Parameters
    ----------
    proba : ndarray of shape (n_rows, n_classes)
    loss : LossMatrix

    Returns
    -------
    ndarray of shape (n_rows, n_classes)

    Examples
    --------
    >>> loss = LossMatrix.binary(cost_false_positive=1.0, cost_false_negative=4.0)
    >>> expected_loss(np.array([[0.9, 0.1]]), loss).round(3).tolist()  # say no, say yes
    [[0.4, 0.9]]
    """
    return proba @ loss.matrix


def bayes_decision(proba: np.ndarray, loss: LossMatrix) -> np.ndarray:
    """The class index, shape (n_rows,), of each row's action of least expected loss
    (:func:`expected_loss` of ``proba``, shape (n_rows, n_classes)); ties go to the lower
    index.

    Examples
    --------
    >>> loss = LossMatrix.binary(cost_false_positive=1.0, cost_false_negative=4.0)
    >>> bayes_decision(np.array([[0.9, 0.1], [0.7, 0.3]]), loss).tolist()  # 1 above 1/5
    [0, 1]
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
    """Loss ``L[y_true, action]`` of each row's decision (class indices).

    Examples
    --------
    >>> loss = LossMatrix.binary(cost_false_positive=1.0, cost_false_negative=4.0)
    >>> realised_loss(np.array([1, 0]), np.array([0, 0]), loss).tolist()  # a miss, a hit
    [4.0, 0.0]
    """
    return loss.matrix[np.asarray(y_true), np.asarray(actions)]
