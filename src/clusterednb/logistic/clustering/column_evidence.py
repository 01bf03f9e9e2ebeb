"""The columns the clusters' label evidence keeps: at a fitted partition, the set of columns
whose regressions make the labels most probable with their weights integrated out.

For a set ``S`` of columns and a partition ``z`` of the tasks, the label evidence is

    E(S, z) = Σ_c log ∫ Π_{u ∈ c} P(y_u | X_u[S], w) N(w; 0, λ⁻¹ I) dw,

each cluster's integral by the Laplace approximation of its tasks' label log-likelihoods
expanded at the pooled MAP of a model reading ``S``
(:meth:`~clusterednb.logistic.clustering.task_expansions.TaskExpansions.log_marginal`); a
numeric column is read by its standardised number, one slope, where the partition's score
reads it so (:class:`LabelledRows`' ``numbered``), its values' one-hot otherwise. A
column that tells the label nothing in any cluster costs each cluster its Occam factor (the
prior's volume over the posterior's, about ``½ log(1 + n_c λ⁻¹ s)`` a weight), so the evidence
leaves it out; a column whose slope differs between the clusters, even one that cancels
over all tasks, earns its weights in every cluster where it predicts.

:func:`evidence_columns` climbs ``E(S, z)`` from every column by single changes (the one that
raises it most, while one does; or all those that raise it at once, where that raises it
more), as a greedy search of variable selection would (Chipman,
George & McCulloch, "The practical implementation of Bayesian model selection", 2001); it
finds a local maximum, checked against all subsets on small problems in the tests.

Why: with six labelled rows a user and 20 noise columns, the label rounds' held-out rows
(60 of them) rejected the four signal columns one time in two; at the fitted partition this
search kept them (issue 49's population: BENCHMARKS.md, "The label evidence chooses the
columns").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from clusterednb.logistic.clustering.shared_slopes import differing_dims
from clusterednb.logistic.clustering.task_expansions import (
    TaskExpansions,
    label_offsets,
    label_rows,
    one_hot_columns,
)

JOINT_SMALL_GAINS = True
"""The search's step of all changes at once gathers every change that raises the evidence at
all, and is made, as any step, where it raises the evidence by :data:`MIN_GAIN`: the bar is
the step's. False: it gathers only the changes that clear the bar alone, as before
2026-12-02. Why: with six rows a user and 20 noise columns, three noise columns each raised
the evidence by 0.4–0.7 nats when left out, 2.6 together, and the search kept all three
(seed 9: 0.822 AUC against 0.902 clean; BENCHMARKS.md, "The label evidence reads numbers by
their slopes")."""
MAX_CHANGES = 200
"""Most single changes the search makes (each raises the evidence, so it ends sooner)."""
MIN_GAIN = float(np.log(3.0))
"""Nats by which a change must raise the evidence to be made: a Bayes factor of 3, where
Kass and Raftery (1995) start to call evidence positive. Without it a weak signal (issue 49's
test of a population without clusters, seed 4: a column of small weight) was left out for a
gain of less, and cost 0.005 AUC; with 3 nats (a factor of 20) the search stopped at every
column on six rows a user, where no single noise column earns that much alone."""


@dataclass(frozen=True)
class LabelledRows:
    """The labelled rows the evidence reads.

    Attributes
    ----------
    codes : ndarray of shape (n_rows, n_features)
        Value codes (-1: missing), the rows grouped by task.
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    task_starts : ndarray of shape (n_tasks + 1,)
        Where each task's rows start.
    offsets : ndarray of shape (n_features + 1,)
        Where each column's values start among all columns' values.
    numbers : ndarray of shape (n_rows, n_numbered), optional
        The standardised numbers of the columns ``numbered`` (0 where missing).
    numbered : ndarray of shape (n_numbered,), optional
        Columns read by their number, one slope, rather than their bins' one-hot, as the
        partition's label score reads them
        (:func:`~clusterednb.logistic.clustering.task_expansions.label_rows`; None: none).
    """

    codes: np.ndarray
    y: np.ndarray
    task_starts: np.ndarray
    offsets: np.ndarray
    numbers: np.ndarray | None = None
    numbered: np.ndarray | None = None

    @property
    def n_features(self) -> int:
        return self.offsets.size - 1

    @property
    def weight_offsets(self) -> np.ndarray:
        """Where each column's weights start when every column is read, shape
        (n_features + 1,): a column read by its number has one."""
        return label_offsets(self.offsets, None, self.numbered)

    def design(self, columns: np.ndarray) -> sparse.csr_matrix:
        """The label design reading ``columns`` (bool, (n_features,)): their values one-hot
        (a numbered column: its number), then an intercept, shape (n_rows, n_weights_read +
        1)."""
        if self.numbered is not None:
            return label_rows(self.codes, self.offsets, columns, self.numbers, self.numbered)
        return one_hot_columns(self.codes, self.offsets, columns)


def label_evidence(
    rows: LabelledRows, columns: np.ndarray, partition: np.ndarray, precision: float
) -> float:
    """``E(S, z)`` (see the module): the label evidence of ``partition`` (n_tasks,) with the
    regressions reading ``columns`` (bool, (n_features,)).

    Examples
    --------
    Two tasks of four rows whose one column follows the label:

    >>> rows = LabelledRows(np.array([[0], [1], [0], [1]] * 2), np.array([0, 1, 0, 1] * 2),
    ...                     np.array([0, 4, 8]), np.array([0, 2]))
    >>> one, apart = np.zeros(2, dtype=int), np.arange(2)
    >>> value = label_evidence(rows, np.array([True]), one, 1.0)
    >>> bool(value < 0), value > label_evidence(rows, np.array([True]), apart, 1.0)
    (True, True)
    """
    return _evidence(rows, columns, partition, precision)[0]


def _evidence(
    rows: LabelledRows,
    columns: np.ndarray,
    partition: np.ndarray,
    precision: float,
    start: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """:func:`label_evidence` and the pooled MAP its expansions are anchored at, spread over
    every weight of every column (0 for those not read) and the intercept, shape
    (``rows.weight_offsets[-1]`` + 1,); Newton's method starts from ``start`` (alike) when
    given."""
    columns = np.asarray(columns, dtype=bool)
    weight_offsets = rows.weight_offsets
    dims = differing_dims(weight_offsets, columns)  # these columns' weights, the intercept
    expansions = TaskExpansions.at_pooled_map(
        rows.design(columns),
        rows.y.astype(np.float64),
        rows.task_starts,
        precision,
        None if start is None else start[dims],
    )
    value = sum(
        expansions.log_marginal(np.flatnonzero(partition == cluster).tolist(), precision)
        for cluster in np.unique(partition)
    )
    spread = np.zeros(int(weight_offsets[-1]) + 1)
    spread[dims] = expansions.anchor
    return float(value), spread


def evidence_columns(rows: LabelledRows, partition: np.ndarray, precision: float) -> np.ndarray:
    """The columns at a local maximum of ``E(S, z)`` over sets ``S`` (see the module), from
    every column (an empty set is not tried); bool, shape (n_features,).

    Parameters
    ----------
    rows : LabelledRows
    partition : ndarray of shape (n_tasks,)
        The fitted partition ``z``.
    precision : float
        ``λ``, the prior precision of the regressions' weights.

    Examples
    --------
    A column that follows the label and one drawn at random, in two clusters of two tasks
    (the random column would cost each cluster its weights):

    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=120)
    >>> codes = np.column_stack([np.where(rng.random(120) < 0.9, y, 1 - y),
    ...                          rng.integers(0, 3, size=120)])
    >>> rows = LabelledRows(codes, y, np.arange(0, 121, 30), np.array([0, 2, 5]))
    >>> evidence_columns(rows, np.array([0, 0, 1, 1]), 1.0).tolist()
    [True, False]
    """
    columns = np.ones(rows.n_features, dtype=bool)
    best, anchor = _evidence(rows, columns, partition, precision)
    for _ in range(MAX_CHANGES):
        changed, value, moved = _best_change(rows, columns, partition, precision, anchor, best)
        if changed is None or not value > best + MIN_GAIN:
            break
        columns, best, anchor = changed, value, moved
    return columns


def _best_change(
    rows: LabelledRows,
    columns: np.ndarray,
    partition: np.ndarray,
    precision: float,
    anchor: np.ndarray,
    current: float,
) -> tuple[np.ndarray | None, float, np.ndarray | None]:
    """Of the sets one column away from ``columns`` (none empty), and, where several of them
    raise the evidence ``current`` (at all: :data:`JOINT_SMALL_GAINS`; else by
    :data:`MIN_GAIN`), the set with all those changes at once, the one of highest evidence,
    its evidence and its pooled MAP (None, -inf, None: no such set); each fitted from
    ``anchor``, the MAP of ``columns``. All changes at once: 20 noise columns leave in one
    step, not twenty, and three that each raise the evidence a little leave together."""
    best, best_value, best_anchor = None, -np.inf, None
    raising = np.zeros(columns.size, dtype=bool)
    for column in range(columns.size):
        candidate = columns.copy()
        candidate[column] = not candidate[column]
        if not candidate.any():
            continue
        value, moved = _evidence(rows, candidate, partition, precision, anchor)
        raising[column] = value > current + (0.0 if JOINT_SMALL_GAINS else MIN_GAIN)
        if value > best_value:
            best, best_value, best_anchor = candidate, value, moved
    together = columns ^ raising
    if raising.sum() > 1 and together.any():
        value, moved = _evidence(rows, together, partition, precision, anchor)
        if value > best_value:
            best, best_value, best_anchor = together, value, moved
    return best, best_value, best_anchor


def pairing_columns(
    rows: LabelledRows,
    columns: np.ndarray,
    candidates: np.ndarray,
    partition: np.ndarray,
    precision: float,
) -> np.ndarray:
    """The candidate columns that act together with a column the evidence keeps: bool, shape
    (n_features,).

    A candidate ``j`` pairs with a kept column ``k`` where the label evidence of the kept
    columns and one more column, the cells of ``(j, k)`` (their values' codes crossed: bins
    for a number), beats by :data:`MIN_GAIN` both that of the kept columns and that of the
    kept columns and ``k``'s values again (so that the cells are not credited with ``k``'s
    own bend). An XOR of two columns, which additive regressions cannot rank, earns its cells;
    a noise column crossed with a signal pays for every cell and does not.

    Parameters
    ----------
    rows : LabelledRows
    columns : ndarray of shape (n_features,), bool
        The columns kept (:func:`evidence_columns`).
    candidates : ndarray of shape (n_features,), bool
        The columns to test (left out of ``columns``).
    partition : ndarray of shape (n_tasks,)
    precision : float

    Examples
    --------
    Two tasks whose label is the XOR of two columns, and a column drawn at random:

    >>> rng = np.random.default_rng(0)
    >>> codes = rng.integers(0, 2, size=(200, 3))
    >>> y = (codes[:, 0] ^ codes[:, 1]) ^ (rng.random(200) < 0.1)
    >>> rows = LabelledRows(codes, y.astype(int), np.array([0, 100, 200]), np.array([0, 2, 4, 6]))
    >>> kept, left = np.array([True, False, False]), np.array([False, True, True])
    >>> pairing_columns(rows, kept, left, np.zeros(2, dtype=int), 1.0).tolist()
    [False, True, False]
    """
    columns, candidates = np.asarray(columns, dtype=bool), np.asarray(candidates, dtype=bool)
    paired = np.zeros(columns.size, dtype=bool)
    if not candidates.any():
        return paired
    base, anchor = _evidence(rows, columns, partition, precision)
    widths = np.diff(rows.offsets)
    for k in np.flatnonzero(columns):
        again = _with_column(rows, rows.codes[:, k], int(widths[k]))  # a number's: its bins
        start = _widened(anchor, int(widths[k]))
        bar = max(base, _evidence(again, _reading(columns), partition, precision, start)[0])
        for j in np.flatnonzero(candidates & ~paired):
            present = (rows.codes[:, j] >= 0) & (rows.codes[:, k] >= 0)
            cells = np.where(present, rows.codes[:, j] * widths[k] + rows.codes[:, k], -1)
            width = int(widths[j] * widths[k])
            crossed = _with_column(rows, cells, width)
            start = _widened(anchor, width)
            value = _evidence(crossed, _reading(columns), partition, precision, start)[0]
            paired[j] = value > bar + MIN_GAIN
    return paired


def _widened(anchor: np.ndarray, width: int) -> np.ndarray:
    """A pooled MAP spread over every column's weights and the intercept (last), with
    ``width`` zero weights of a column appended before the intercept: the start of the rows
    with that column (:func:`_with_column`)."""
    return np.concatenate([anchor[:-1], np.zeros(width), anchor[-1:]])


def _with_column(rows: LabelledRows, codes: np.ndarray, width: int) -> LabelledRows:
    """``rows`` with one more categorical column of value ``codes`` (n_rows,; -1 missing)
    and ``width`` values, last."""
    return LabelledRows(
        np.column_stack([rows.codes, codes]),
        rows.y,
        rows.task_starts,
        np.append(rows.offsets, rows.offsets[-1] + width),
        rows.numbers,
        rows.numbered,
    )


def _reading(columns: np.ndarray) -> np.ndarray:
    """``columns`` (bool, (n_features,)) and the column appended last."""
    return np.append(columns, True)
