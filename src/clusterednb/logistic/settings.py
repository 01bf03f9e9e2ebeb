"""The hyperparameters of one :class:`~clusterednb.ClusteredLogisticRegression` fit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from clusterednb.exceptions import CNBError, check_choice

AUTO = "auto"
MAX_ENUMERATED_TASKS = 8
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
    inference: str = "auto"
    n_sweeps: int = 30
    burn_in: int = 10
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
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise CNBError(f"{name} must be a non-negative integer, got {value!r}")
        if self.burn_in >= self.n_sweeps:
            raise CNBError(f"burn_in ({self.burn_in}) must be below n_sweeps ({self.n_sweeps})")

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
