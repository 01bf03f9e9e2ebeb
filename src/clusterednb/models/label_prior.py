"""The label pseudo-counts ``α`` chosen by the evidence (type-II maximum likelihood).

Every naive-Bayes model of the package gives each task its own label distribution
``φ_u ~ Dir(α)``, so the labels add ``Σ_u log DM(m[u]; α)`` to the log evidence whatever the
partition of the tasks (``docs/model.md``). With ``α = 1`` a task with one labelled row
predicts its label with probability 2/3 whatever the population's label rate: on landmine,
where 6 % of rows are positive, a field with one negative label is given a prior of 1/3
positive. ``alpha="auto"`` instead takes the ``α`` that maximises that term over the
training tasks — the population's label rate and how much tasks differ from it, learnt from
all of them — so a task with few labels starts from what the other tasks say.

The term does not depend on the partition, so ``α`` is found once, before inference,
and the partition posterior is unchanged. The optimum is searched over ``log α`` with
L-BFGS-B within :data:`ALPHA_BOUNDS`: when every task has the same label rate the evidence
keeps growing with ``Σ α`` (no spread between tasks), and a class never seen would drive its
``α`` to 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import digamma, gammaln

from clusterednb.exceptions import CNBError

AUTO = "auto"
ALPHA_BOUNDS = (0.05, 1e4)


def log_label_evidence(alpha: np.ndarray, label_counts: np.ndarray) -> float:
    """``Σ_u log DM(m[u]; α)``: the labels' log evidence, shape () from counts (n_tasks, C).

    Examples
    --------
    Two tasks, labels (yes, yes) and (no): ``1/2 · 2/3`` and ``1/2`` under ``α = (1, 1)``:

    >>> value = log_label_evidence(np.ones(2), np.array([[0, 2], [1, 0]]))
    >>> round(float(np.exp(value)), 12)
    0.166666666667
    """
    counts = np.asarray(label_counts, dtype=np.float64)
    totals = counts.sum(axis=1)
    return float(
        (gammaln(alpha.sum()) - gammaln(alpha.sum() + totals)).sum()
        + (gammaln(alpha + counts) - gammaln(alpha)).sum()
    )


def _negative_evidence(
    log_alpha: np.ndarray, counts: np.ndarray, totals: np.ndarray, weight: np.ndarray
) -> tuple[float, np.ndarray]:
    """Minus the weighted evidence of distinct count rows, and its gradient in ``log α``."""
    alpha = np.exp(log_alpha)
    total = alpha.sum()
    value = weight @ (
        gammaln(total) - gammaln(total + totals) + (gammaln(alpha + counts) - gammaln(alpha)).sum(1)
    )
    shared = weight @ (digamma(total) - digamma(total + totals))
    own = weight @ (digamma(alpha + counts) - digamma(alpha))
    return -float(value), -(shared + own) * alpha


def evidence_alpha(label_counts: np.ndarray) -> np.ndarray:
    """The ``α`` of shape (C,) that maximises :func:`log_label_evidence` within
    :data:`ALPHA_BOUNDS` (all ones when no task has a labelled row).

    Parameters
    ----------
    label_counts : ndarray of shape (n_tasks, n_classes)

    Returns
    -------
    ndarray of shape (n_classes,)

    Examples
    --------
    Tasks whose label rates spread around 1/4:

    >>> counts = np.array([[9, 1], [6, 4], [8, 2], [7, 3], [10, 0], [5, 5]])
    >>> alpha = evidence_alpha(counts)
    >>> round(float(alpha[1] / alpha.sum()), 2)  # the population's rate of the second class
    0.25
    """
    counts = np.asarray(label_counts, dtype=np.float64)
    counts = counts[counts.sum(axis=1) > 0]
    n_classes = np.asarray(label_counts).shape[1]
    if counts.shape[0] == 0:
        return np.ones(n_classes)
    rows, weight = np.unique(counts, axis=0, return_counts=True)
    low, high = np.log(ALPHA_BOUNDS)
    rate = (counts.sum(axis=0) + 0.5) / (counts.sum() + 0.5 * n_classes)
    start = np.clip(np.log(2.0 * n_classes * rate), low, high)
    result = minimize(
        _negative_evidence,
        start,
        args=(rows, rows.sum(axis=1), weight.astype(np.float64)),
        jac=True,
        method="L-BFGS-B",
        bounds=[(low, high)] * n_classes,
    )
    return np.exp(np.clip(result.x, low, high))


def resolve(alpha: Any, label_counts: np.ndarray) -> Any:
    """``alpha`` as given, or the evidence's ``α`` when it is "auto".

    Examples
    --------
    >>> resolve(2.0, np.array([[1, 0]]))
    2.0
    >>> resolve("auto", np.zeros((2, 2))).tolist()  # no labels yet: the uniform prior
    [1.0, 1.0]
    """
    if isinstance(alpha, str):
        if alpha != AUTO:
            raise CNBError(
                f"alpha must be a positive number, per-class numbers or 'auto', got {alpha!r}"
            )
        return evidence_alpha(label_counts)
    return alpha
