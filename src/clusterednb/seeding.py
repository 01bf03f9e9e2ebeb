"""Randomness comes only from a ``numpy.random.Generator`` passed in."""

from __future__ import annotations

import numpy as np


def as_generator(random_state: int | np.random.Generator | None) -> np.random.Generator:
    """The generator itself, or a new one seeded by ``random_state``.

    Examples
    --------
    >>> as_generator(0).integers(10) == as_generator(0).integers(10)
    np.True_
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)
