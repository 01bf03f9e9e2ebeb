"""Calibration of predicted probabilities: per-split bin counts and the reliability table.

Each split records, for :data:`N_BINS` equal-width bins of the predicted ``P(y = 1)``, how
many test rows fell in the bin, the sum of their predictions and the sum of their labels
(space-separated in the split row, so a run stays one resumable CSV). Summed over splits they
give each model's reliability curve: mean prediction against observed frequency per bin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

N_BINS = 10
COLUMNS = ("cal_count", "cal_sum_p", "cal_sum_y")


def bin_sums(y: np.ndarray, p1: np.ndarray) -> dict[str, str]:
    """The split's calibration columns: counts, prediction sums and label sums per bin.

    Parameters
    ----------
    y : ndarray of shape (n_rows,)
        Labels 0/1.
    p1 : ndarray of shape (n_rows,)
        Predicted ``P(y = 1)``.

    Examples
    --------
    >>> sums = bin_sums(np.array([0, 1, 1]), np.array([0.05, 0.07, 0.93]))
    >>> sums["cal_count"]
    '2 0 0 0 0 0 0 0 0 1'
    >>> sums["cal_sum_y"]
    '1 0 0 0 0 0 0 0 0 1'
    """
    which = np.minimum((np.asarray(p1) * N_BINS).astype(int), N_BINS - 1)
    count = np.bincount(which, minlength=N_BINS)
    sum_p = np.bincount(which, weights=p1, minlength=N_BINS)
    sum_y = np.bincount(which, weights=y, minlength=N_BINS)
    return {
        "cal_count": " ".join(str(int(c)) for c in count),
        "cal_sum_p": " ".join(f"{v:.10g}" for v in sum_p),
        "cal_sum_y": " ".join(f"{v:.10g}" for v in sum_y),
    }


def reliability_table(splits: pd.DataFrame) -> pd.DataFrame:
    """Per (model, k, bin): rows, mean prediction, observed frequency, and the expected
    calibration error of the (model, k) (``Σ_b n_b |mean_p − freq| / n``).

    Splits without calibration columns (runs written before they existed) are left out;
    bins with no rows are dropped.

    Examples
    --------
    >>> sums = bin_sums(np.array([0, 1]), np.array([0.1, 0.9]))
    >>> table = reliability_table(pd.DataFrame([{"model": "m", "k": 1, **sums}]))
    >>> table["bin"].tolist(), table["frequency"].tolist(), round(float(table["ece"][0]), 3)
    ([1, 9], [0.0, 1.0], 0.1)
    """
    columns = ["model", "k", "bin", "n_rows", "mean_p", "frequency", "ece"]
    if splits.empty or not set(COLUMNS) <= set(splits.columns):
        return pd.DataFrame(columns=columns)
    used = splits.dropna(subset=list(COLUMNS))
    out = []
    for (model, k), rows in used.groupby(["model", "k"]):
        sums = {
            name: np.array([np.array(v.split(), dtype=float) for v in rows[name]]).sum(axis=0)
            for name in COLUMNS
        }
        count = sums["cal_count"]
        present = count > 0
        mean_p = sums["cal_sum_p"][present] / count[present]
        frequency = sums["cal_sum_y"][present] / count[present]
        ece = float((count[present] * np.abs(mean_p - frequency)).sum() / count.sum())
        for b, n, p, f in zip(
            np.flatnonzero(present), count[present], mean_p, frequency, strict=True
        ):
            out.append([model, k, int(b), int(n), p, f, ece])
    return pd.DataFrame(out, columns=columns)
