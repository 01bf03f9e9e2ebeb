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


def side_stream(rng: np.random.Generator) -> np.random.Generator:
    """A generator of its own for a side computation, spawned from ``rng`` without moving
    ``rng``'s stream: what ``rng`` draws next is what it would have drawn without the side
    computation (same seed, same numbers either way).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> _ = side_stream(rng).random(5)
    >>> bool(rng.random() == np.random.default_rng(0).random())
    True
    """
    try:
        return rng.spawn(1)[0]
    except TypeError:  # a bit generator made without a seed sequence: draw a seed
        return np.random.default_rng(int(rng.integers(2**63)))
