"""The hyperparameters of one :class:`~clusterednb.ClusteredLogisticRegression` fit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError, check_choice

AUTO = "auto"
MAX_ENUMERATED_TASKS = 8
DEFAULT_SWEEPS = 30
"""Gibbs sweeps of an "auto" chain (a third of them burn-in) where tasks have rows enough."""
FEW_ROWS = 8
"""Labelled rows below which the median task's partition is sampled with longer chains."""
FEW_ROWS_CHAIN = 4
"""How many times :data:`DEFAULT_SWEEPS` an "auto" chain sweeps where the median task with
labels has fewer than :data:`FEW_ROWS` of them. A task of six rows barely moves the label
score, the partition posterior is spread over many partitions, and twenty draws of it are
noisy: on issue 49's population with six rows a user, four times the sweeps gained
0.02–0.035 AUC with 0, 1 and 20 noise columns (BENCHMARKS.md, nineteenth part); with ten rows
a user they gained nothing."""
DEFAULT_BIN_PRECISION = 4.0
"""The prior precision of a numeric column's bin weights in the regressions, in units of
``1 / C``, where it is not chosen on held rows. The regressions read a number twice, raw (its
slope) and as the one-hot of its bins (a curve); under the same prior the bins fit a second
slope from few labels. Four times the slope's precision keeps them to corrections of it:
chosen on issue 49's population (ten rows a user: +0.006 AUC at every count of noise
columns); then, unseen before, landmine gained 0.001–0.004 at k = 1 … 64 (BENCHMARKS.md, "A
number's bins under a tighter prior"). It is where the tuning's walk of
:data:`BIN_PRECISIONS` starts."""
BIN_PRECISIONS = (256.0, 64.0, 16.0, 4.0, 1.0)
"""The bins' prior precisions an "auto" ``bin_precision`` is chosen among, walked from
:data:`DEFAULT_BIN_PRECISION` towards tighter first
(:func:`clusterednb.logistic.tuning.bins_walked`).
Landmine's protocol T, each value fixed (BENCHMARKS.md, "The bins' prior chosen on held
rows"): 16 gained 0.004–0.006 AUC over 4 at k = 4 … 64 and 64 gained 0.007–0.010; 1 lost
0.002–0.004."""
INFERENCES = ("auto", "exact", "gibbs")
VALIDATIONS = ("half", "like-fewest")


@dataclass(frozen=True)
class FitSettings:
    """The hyperparameters of one fit (see :class:`~clusterednb.ClusteredLogisticRegression`).

    Examples
    --------
    >>> FitSettings(effective_rows=10.0, floor=0.2).with_chosen(5.0, 1.0).floor
    1.0
    """

    gamma: float = 1.0
    effective_rows: float | str = AUTO
    floor: float | str = AUTO
    beta: float = 1.0
    precision: float = 1.0
    C: float = 1.0
    bin_precision: float | str = DEFAULT_BIN_PRECISION
    inference: str = "auto"
    n_sweeps: int | str = DEFAULT_SWEEPS
    burn_in: int | str = DEFAULT_SWEEPS // 3
    validation: str = "like-fewest"
    deviation_scale: float | str = 0.0
    relevance: bool | str = False

    def check(self) -> None:
        """Raise :class:`CNBError` naming the first setting outside its allowed values.

        Examples
        --------
        >>> try:
        ...     FitSettings(floor=2.0).check()
        ... except CNBError as error:
        ...     print(error)
        floor must be in [0, 1] or 'auto', got 2.0
        """
        positive = {
            "gamma": self.gamma,
            "beta": self.beta,
            "precision": self.precision,
            "C": self.C,
        }
        for name, value in positive.items():
            if isinstance(value, bool) or not (isinstance(value, int | float) and value > 0):
                raise CNBError(f"{name} must be a positive number, got {value!r}")
        bins = self.bin_precision
        if bins != AUTO and (
            isinstance(bins, bool) or not (isinstance(bins, int | float) and 0 < bins < np.inf)
        ):
            raise CNBError(
                f"bin_precision must be a positive finite number or 'auto', got {bins!r}"
            )
        rows = self.effective_rows
        if rows != AUTO and (
            isinstance(rows, bool) or not (isinstance(rows, int | float) and rows > 0)
        ):
            raise CNBError(
                f"effective_rows must be positive (inf: no tempering) or 'auto', got {rows!r}"
            )
        check_choice("relevance", self.relevance, (False, True, AUTO))
        scale = self.deviation_scale
        if scale != AUTO and (
            isinstance(scale, bool) or not (isinstance(scale, int | float) and 0 <= scale < np.inf)
        ):
            raise CNBError(f"deviation_scale must be a finite number >= 0 or 'auto', got {scale!r}")
        floor_ok = isinstance(self.floor, int | float) and 0 <= self.floor <= 1
        if self.floor != AUTO and not floor_ok:
            raise CNBError(f"floor must be in [0, 1] or 'auto', got {self.floor!r}")
        check_choice("inference", self.inference, INFERENCES)
        check_choice("validation", self.validation, VALIDATIONS)
        for name in ("n_sweeps", "burn_in"):
            value = getattr(self, name)
            count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            if value != AUTO and not count:
                raise CNBError(f"{name} must be a non-negative integer or 'auto', got {value!r}")
        if AUTO not in (self.n_sweeps, self.burn_in) and self.burn_in >= self.n_sweeps:
            raise CNBError(f"burn_in ({self.burn_in}) must be below n_sweeps ({self.n_sweeps})")
        if self.n_sweeps == 0:
            raise CNBError("n_sweeps must be at least 1, got 0")

    def with_bins_resolved(self) -> FitSettings:
        """These settings with an "auto" ``bin_precision`` made
        :data:`DEFAULT_BIN_PRECISION` (a fit that walks no bins, and where the walk starts).

        Examples
        --------
        >>> FitSettings(bin_precision=AUTO).with_bins_resolved().bin_precision
        4.0
        >>> FitSettings(bin_precision=16.0).with_bins_resolved().bin_precision
        16.0
        """
        if self.bin_precision != AUTO:
            return self
        return replace(self, bin_precision=DEFAULT_BIN_PRECISION)

    def with_chosen(self, effective_rows: Any, floor: Any) -> FitSettings:
        """These settings with ``effective_rows`` and ``floor`` fixed.

        Examples
        --------
        >>> chosen = FitSettings().with_chosen(15.0, 0.5)
        >>> chosen.effective_rows, chosen.floor, chosen.gamma
        (15.0, 0.5, 1.0)
        """
        return replace(self, effective_rows=effective_rows, floor=floor)

    @property
    def deviation_variance(self) -> float:
        """Prior variance ``s² C`` of each task's deviation weights (0: no deviations); the
        scale ``s`` must be fixed.

        Examples
        --------
        >>> FitSettings(deviation_scale=0.5, C=2.0).deviation_variance
        0.5
        """
        if self.deviation_scale == AUTO:
            raise CNBError("deviation_scale is 'auto': choose it before fitting deviations")
        return float(self.deviation_scale) ** 2 * self.C


def resolved_chain(settings: FitSettings, data: Any = None) -> FitSettings:
    """``settings`` with an "auto" ``n_sweeps`` made :data:`DEFAULT_SWEEPS`, or
    :data:`FEW_ROWS_CHAIN` times it where the median task with labelled rows has fewer than
    :data:`FEW_ROWS` of them, and an "auto" ``burn_in`` a third of the sweeps; numbers are
    kept as given.

    Parameters
    ----------
    settings : FitSettings
    data : JointData or ndarray of shape (n_tasks,), optional
        The fit's rows (their labelled rows counted by task), or those counts; None: not
        known (the default chain).

    Examples
    --------
    >>> ten, six = np.full(30, 10), np.full(30, 6)
    >>> chain = resolved_chain(FitSettings(n_sweeps=AUTO, burn_in=AUTO), ten)
    >>> chain.n_sweeps, chain.burn_in
    (30, 10)
    >>> chain = resolved_chain(FitSettings(n_sweeps=AUTO, burn_in=AUTO), six)
    >>> chain.n_sweeps, chain.burn_in
    (120, 40)
    >>> chain = resolved_chain(FitSettings(n_sweeps=12, burn_in=AUTO), six)  # a number is kept
    >>> chain.n_sweeps, chain.burn_in
    (12, 4)
    """
    sweeps = settings.n_sweeps
    if sweeps == AUTO:
        few = 0 < median_task_rows(_labelled_per_task(data)) < FEW_ROWS
        sweeps = DEFAULT_SWEEPS * (FEW_ROWS_CHAIN if few else 1)
    burn_in = sweeps // 3 if settings.burn_in == AUTO else settings.burn_in
    resolved = replace(settings, n_sweeps=int(sweeps), burn_in=int(burn_in))
    resolved.check()  # a burn-in given against "auto" sweeps may not fit them
    return resolved


def _labelled_per_task(data: Any) -> np.ndarray:
    """Labelled rows of each task of a JointData (or the counts given), shape (n_tasks,)."""
    if data is None:
        return np.zeros(0, dtype=np.int64)
    if hasattr(data, "task_starts"):
        return np.diff(data.task_starts)
    return np.asarray(data)


def median_task_rows(rows_per_task: np.ndarray) -> float:
    """The median count of ``rows_per_task`` (n_tasks,) over the tasks that have rows (0 when
    none has).

    Examples
    --------
    >>> median_task_rows(np.array([0, 10, 9, 2])), median_task_rows(np.zeros(3))
    (9.0, 0.0)
    """
    rows = np.asarray(rows_per_task)
    rows = rows[rows > 0]
    return float(np.median(rows)) if rows.size else 0.0


def task_tempering(rows_per_task: np.ndarray, effective_rows: float) -> np.ndarray:
    """``τ_u = min(1, R / n_u)``: the power on each task's likelihood, so that no task counts
    as more than ``R`` rows (a task of few rows keeps its full weight), shape (n_tasks,).

    Examples
    --------
    >>> task_tempering(np.array([4, 20, 100]), 10.0).tolist()
    [1.0, 0.5, 0.1]
    """
    return np.minimum(1.0, effective_rows / np.maximum(rows_per_task, 1))
