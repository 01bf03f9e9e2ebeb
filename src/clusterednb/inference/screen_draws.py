"""The random draws of the screen's tests (:mod:`~clusterednb.inference.relevance_screen`):
each column's statistic against its own deals or shuffles, stopped early where a column
stands clear, and the entries they move.

Each column draws from its own stream (:class:`ColumnStreams`), so its verdict does not
depend on which other columns the table holds. A deal moves the entries of one column (one
per counted value, listed by column, then task: :func:`entries_by_column`) and allocates
nothing as large as the table: the kernels write into buffers kept from deal to deal.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from clusterednb.seeding import data_stream
from clusterednb.stats.column_tests import above_chance, all_distinct

N_DRAWS = 30
"""Random deals (and label shuffles) that give the null mean and spread of each statistic."""
EARLY_STOPS = ((3, 60.0), (5, 20.0), (10, 10.0))
"""``(draws, z)``: after that many draws a column's test stops when it stands ``z`` standard
deviations above them and no two of them are one value; the others read more draws.

- The fewer the draws, the higher the bar: a spread from three draws can be a tenth of the
  true one, from five a third, from ten rarely half. A column drawn at random stands 60 s.d.
  above three draws with a chance of 2e-4 (``√(4/3)`` times Student's t with 2 degrees of
  freedom), 20 above five with 3e-5, against the 2.4e-4 with which it passes
  :data:`~clusterednb.inference.relevance_screen.SCREEN_Z` on 30. (The heterogeneity test
  deals only the columns its exact moments leave undecided:
  :data:`~clusterednb.inference.relevance_screen.MOMENTS_CLEAR_Z`; landmine's fields stand
  28–1 382 s.d. above deals, and every one of them clears without one.)
- Those chances hold for a statistic of continuous values. On a table of a few rows the
  statistic takes few values, a few draws can agree by chance and show no spread at all
  (:func:`~clusterednb.stats.column_tests.all_distinct`): a column whose draws repeat a
  value does not stop early.
"""


GiveUp = Callable[[np.ndarray], bool] | None
"""A test's early end: called with the columns still undecided at a stop, True ends it."""


def above_draws(observed: np.ndarray, draw, give_up: GiveUp = None) -> np.ndarray:
    """:func:`~clusterednb.stats.column_tests.above_chance` of each column of ``observed``
    (F,) against :data:`N_DRAWS` of its values under ``draw(columns)`` (the statistic of the
    given columns under one shuffle, (len(columns),)), or against fewer: at each of
    :data:`EARLY_STOPS` the columns that already stand clear above distinct draws are decided,
    and later draws shuffle only the others (on MovieLens 18 of 21 columns were decided after
    five deals, and the other 25 deals dealt three columns' values).

    ``give_up(undecided)`` (the positions of the columns still undecided at a stop) True ends
    the test there: those columns' z is NaN. A caller that only needs to know whether the
    undecided columns together could matter passes it
    (:func:`~clusterednb.logistic.relevance_gate.columns_alike`).

    Examples
    --------
    >>> observed = np.array([100.0, 0.0])  # column 0 far above its draws, column 1 not
    >>> rng = np.random.default_rng(0)
    >>> def draw(columns):
    ...     return rng.normal(size=columns.size)
    >>> z = above_draws(observed, draw, give_up=lambda undecided: True)
    >>> bool(z[0] > 20), bool(np.isnan(z[1]))
    (True, True)
    """
    z = np.empty(observed.size)
    null = np.empty((N_DRAWS, observed.size))
    undecided, done = np.arange(observed.size), 0
    for draws, clear in EARLY_STOPS:
        for row in range(done, draws):
            null[row, undecided] = draw(undecided)
        done = draws
        early = above_chance(observed[undecided], null[:draws, undecided])
        z[undecided] = early
        stands_clear = (early > clear) & all_distinct(null[:draws, undecided])
        undecided = undecided[~stands_clear]
        if undecided.size == 0:
            return z
        if give_up is not None and give_up(undecided):
            z[undecided] = np.nan
            return z
    for row in range(done, N_DRAWS):
        null[row, undecided] = draw(undecided)
    z[undecided] = above_chance(observed[undecided], null[:, undecided])
    return z


def entries_of(
    bounds: np.ndarray, columns: np.ndarray, n_columns: int | None = None
) -> np.ndarray | slice:
    """The positions of ``columns``' entries among entries sorted by column (column ``c``'s
    are ``bounds[c]`` to ``bounds[c + 1]``), in order; every entry (a slice: no copies of
    the entries, each a fresh allocation as large as the table) when ``columns`` are all
    ``n_columns`` of them.

    Examples
    --------
    >>> entries_of(np.array([0, 2, 5, 6]), np.array([0, 2])).tolist()
    [0, 1, 5]
    >>> entries_of(np.array([0, 2, 5, 6]), np.array([0, 1, 2]), 3)
    slice(None, None, None)
    """
    if n_columns is not None and columns.size == n_columns:
        return slice(None)
    starts, stops = bounds[columns], bounds[columns + 1]
    lengths = stops - starts
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return np.arange(lengths.sum()) + offsets


class ColumnStreams:
    """One generator per column for the shuffles of the screen's tests (``streams[k]``: the
    ``k``-th column drawn), each seeded from one draw of ``rng`` and the column's position
    (:meth:`from_rng`), or from the column's own counts (:meth:`of_columns`): a column's
    shuffles, and so its verdict, do not depend on how many other columns the table holds
    (adding noise columns to a table leaves the other columns' verdicts as they were).

    Examples
    --------
    >>> alone = ColumnStreams.from_rng(np.random.default_rng(0), np.arange(1))
    >>> among_three = ColumnStreams.from_rng(np.random.default_rng(0), np.arange(3))
    >>> first, bounds = np.array([0]), np.array([0, 2, 5, 9])
    >>> alone.uniforms(first, bounds).tolist() == among_three.uniforms(first, bounds).tolist()
    True
    """

    def __init__(self, streams: list[np.random.Generator]) -> None:
        self.streams = streams
        self.buffer: np.ndarray | None = None

    @classmethod
    def from_rng(cls, rng: np.random.Generator, columns: np.ndarray) -> ColumnStreams:
        """Streams of ``columns`` (positions in the table), each seeded from one draw of
        ``rng`` (drawn whatever the columns, none included) and the column's position."""
        seed = int(rng.integers(2**63))  # one draw, whatever the number of columns
        return cls([np.random.default_rng([seed, column]) for column in columns.tolist()])

    @classmethod
    def of_columns(
        cls, value_counts: np.ndarray, offsets: np.ndarray, salt: int, columns: np.ndarray
    ) -> ColumnStreams:
        """Streams of ``columns`` (positions in the table), each seeded by its column's own
        counts (``value_counts[..., start:stop]`` of shape (U, C, V_f);
        :func:`~clusterednb.seeding.data_stream`) and ``salt`` (one per test): a column's
        verdict is then a function of its counts alone, whatever seed the fit was given and
        whatever else the table holds.

        Examples
        --------
        Two tasks, one class; column 0 alone, then beside another column:

        >>> counts = np.array([[[2, 0, 1, 1]], [[0, 2, 1, 1]]])
        >>> first = np.array([0])
        >>> alone = ColumnStreams.of_columns(counts[..., :2], np.array([0, 2]), 1, first)
        >>> beside = ColumnStreams.of_columns(counts, np.array([0, 2, 4]), 1, first)
        >>> bounds = np.array([0, 4])
        >>> alone.uniforms(first, bounds).tolist() == beside.uniforms(first, bounds).tolist()
        True
        """
        return cls(
            [
                data_stream(salt, value_counts[..., offsets[column] : offsets[column + 1]])
                for column in columns.tolist()
            ]
        )

    def uniforms(self, columns: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """Uniforms for ``columns``' entries (column ``c``'s are ``bounds[c]`` to
        ``bounds[c + 1]`` among entries sorted by column), in their order, (n_entries,):
        written into one buffer kept from call to call (a fresh array as large as the table
        at every deal cost as much as the deal)."""
        if self.buffer is None:
            self.buffer = np.empty(int(bounds[-1]))
        at = 0
        for column in columns.tolist():
            length = int(bounds[column + 1] - bounds[column])
            self.streams[column].random(out=self.buffer[at : at + length])
            at += length
        return self.buffer[:at]


def entries_by_column(by_task: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One ``(task, value)`` entry per counted value of ``by_task`` (U, V), by column, then
    task, then value (no sort: the cells are listed in that order).

    Examples
    --------
    >>> task, value = entries_by_column(np.array([[1, 0, 2], [0, 1, 1]]), np.array([0, 2, 3]))
    >>> task.tolist(), value.tolist()
    ([0, 1, 0, 0, 1], [0, 1, 2, 2, 2])
    """
    n_tasks = by_task.shape[0]
    cell_task, cell_value = [], []
    for start, stop in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        cell_task.append(np.repeat(np.arange(n_tasks), stop - start))
        cell_value.append(np.tile(np.arange(start, stop), n_tasks))
    cell_task, cell_value = np.concatenate(cell_task), np.concatenate(cell_value)
    repeats = by_task[cell_task, cell_value].astype(np.int64)
    return np.repeat(cell_task, repeats), np.repeat(cell_value, repeats)
