"""Which columns the learners inside the clusters read beyond the regressions' own.

Where the label evidence chose the columns again and the clustering was fitted again on them
(:func:`~clusterednb.logistic.label_judgement.fit_tuned`), a column its first fit read and the
evidence left out may still act together with a kept one, as both of an XOR do, which
additive regressions cannot rank. The trees read such a column where the evidence of its
cells crossed with a kept column's says so
(:func:`~clusterednb.logistic.clustering.column_evidence.pairing_columns`); the other columns
the evidence left out they leave out too.

Why: until 2026-12-02 the trees read every column either fit read. With six rows a user and
20 noise columns the first fit read all ten noise numbers on some seeds, the trees split on
them, and the booster fell 0.023 below its clean AUC (0.006 reading the second fit's columns
alone; BENCHMARKS.md, "The label evidence reads numbers by their slopes, its small gains leave
together").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError
from clusterednb.learners.tables import matrix_codes
from clusterednb.logistic import fit as logistic_fit
from clusterednb.logistic import label_judgement
from clusterednb.logistic.clustering.column_evidence import LabelledRows, pairing_columns


def paired_columns(
    clustering: Any, matrix: np.ndarray, row_task: np.ndarray, y: np.ndarray
) -> list[str] | None:
    """The names of the columns the first fit read and the evidence left out that pair with a
    kept column (a list, possibly empty), or None where the clustering was not fitted again.

    Parameters
    ----------
    clustering : ClusteredLogisticRegression
        Fitted.
    matrix : ndarray of shape (n_rows, n_features)
        :func:`~clusterednb.learners.tables.encoded_matrix` of the kept labelled rows.
    row_task : ndarray of shape (n_rows,)
        Each row's task position.
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    """
    first = getattr(clustering, "columns_first_left_out_", None)
    if first is None:
        return None
    names = list(clustering.feature_names_in_)
    left_out, first_left_out = set(clustering.columns_left_out_), set(first)
    candidates = np.array([n in left_out and n not in first_left_out for n in names])
    if not candidates.any():
        return []
    rows = kept_rows(clustering, matrix, row_task, y)
    kept = np.array([n not in left_out for n in names])
    paired = pairing_columns(rows, kept, candidates, clustering.partition_, clustering.precision)
    return [names[i] for i in np.flatnonzero(paired)]


def kept_rows(
    clustering: Any, matrix: np.ndarray, row_task: np.ndarray, y: np.ndarray
) -> LabelledRows:
    """The kept labelled rows as the label evidence reads them, grouped by task: a
    :class:`~clusterednb.logistic.clustering.column_evidence.LabelledRows` whose numbers are
    read by their slopes where the clustering's evidence reads them so."""
    order = np.argsort(row_task, kind="stable")
    codes, numbers = matrix_codes(matrix[order], clustering.schema_, clustering.numeric_.names)
    counts = np.bincount(row_task, minlength=clustering.task_ids_.size)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    offsets = np.asarray(clustering.schema_.offsets, dtype=np.int64)
    by_slope = logistic_fit.NUMBERS_BY_SLOPE and label_judgement.EVIDENCE_BY_SLOPE
    if numbers is None or not by_slope:
        return LabelledRows(codes, y[order].astype(np.float64), starts, offsets)
    names = list(clustering.schema_.feature_names)
    numbered = np.array([names.index(n) for n in clustering.numeric_.names], dtype=np.int64)
    standardised = clustering.numeric_.transform(numbers)
    return LabelledRows(codes, y[order].astype(np.float64), starts, offsets, standardised, numbered)


def restored_paired(saved: Any) -> list[str] | None:
    """A model file's ``paired_columns`` (None in files before 2026-12-02: the learners then
    read every column the first fit read, as they did)."""
    if saved is None:
        return None
    if not isinstance(saved, list) or not all(isinstance(name, str) for name in saved):
        raise CNBError(f"the file's paired_columns must be a list of column names, got {saved!r}")
    return list(saved)
