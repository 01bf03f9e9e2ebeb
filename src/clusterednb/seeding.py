"""Randomness comes only from a ``numpy.random.Generator`` passed in, or, for a test whose
shuffles should depend on the data alone, from a generator seeded by the data
(:func:`data_stream`)."""

from __future__ import annotations

import copy
import hashlib

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


def detached_stream(rng: np.random.Generator) -> np.random.Generator:
    """A generator for a side computation that neither moves ``rng``'s stream nor spawns from
    its seed sequence: a copy of its bit generator jumped far ahead (``jumped``; bit generators
    without it: :func:`side_stream`). A computation that may or may not run (a gate) then
    leaves every later draw and every later :func:`side_stream` of ``rng`` as they would have
    been without it.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> _ = detached_stream(rng).random(5)
    >>> later = side_stream(rng).random()
    >>> bool(later == side_stream(np.random.default_rng(0)).random())
    True
    """
    bits = rng.bit_generator
    if not hasattr(bits, "jumped"):
        return side_stream(rng)
    return np.random.Generator(copy.deepcopy(bits).jumped())


def data_stream(salt: int, *arrays: np.ndarray) -> np.random.Generator:
    """A generator seeded by the contents of ``arrays`` (their shapes and float64 values) and
    ``salt``: shuffles drawn from it make a test a function of its data, the same run after
    run and whatever seed a fit was given (a column's screen verdict in naive Bayes, which
    the exact and BHC engines would otherwise turn into the only random part of their fit).

    Examples
    --------
    >>> counts = np.array([[3, 1], [0, 2]])
    >>> first, again = data_stream(1, counts).random(), data_stream(1, counts.copy()).random()
    >>> bool(first == again), bool(first == data_stream(2, counts).random())
    (True, False)
    """
    digest = hashlib.blake2b(digest_size=16)
    for array in arrays:
        values = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(np.asarray(values.shape, dtype=np.int64).tobytes())
        digest.update(values.tobytes())
    words = np.frombuffer(digest.digest(), dtype=np.uint64)
    return np.random.default_rng([salt, *(int(word) for word in words)])
