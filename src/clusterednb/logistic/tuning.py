"""Choosing ``effective_rows`` and ``floor`` of :class:`~clusterednb.ClusteredLogisticRegression`
on the training tasks alone.

Validation rows are labelled rows whose labels are hidden from the fit, in one of two ways
(``validation``):

- "half": every task with at least :data:`MIN_ROWS` labelled rows lends half of them (drawn
  at random); their features stay in the fit, as those of any unlabelled row.
- "like-fewest": a third of those tasks (at least one, drawn at random) are made to look like
  the task with the fewest labelled rows, ``m``: each keeps ``min(m, half)`` of its labelled
  rows and lends the rest. If that task has unlabelled rows the lent rows' features stay in
  the fit; if not, the lent rows leave it. The other tasks keep all their labels, as the
  tasks beside a new user with few labels do.

The settings are found by a walk on the grids (:func:`walk_grid`) rather than by trying all
24: it starts at ``effective_rows = 30`` with the lowest floor, moves along the rows while the
held-out log-loss falls, then raises the floor while it falls; the highest floor (``1``: the
pooled regression) is always tried, so where clustering does not help the model falls back to
pooled regression. Each value of ``effective_rows`` tried costs one partition posterior; of
the settings tried, the least mean log-loss on the validation rows wins. With
``deviation_scale="auto"`` the winning clusters' held-out tasks then choose a deviation scale
from :data:`DEVIATION_SCALES` the same way (``0`` unless a scale beats it). Why a walk, and
how close it ends to the whole grid: docs/decisions.md.

Above :data:`MAX_TUNING_TASKS` tasks, the settings are chosen on that many (all their rows;
:func:`tuning_tasks`): each partition posterior of the walk costs ``n_tasks × n_clusters``
Cholesky factorisations per sweep, and a few hundred tasks say which setting predicts best
as well as a thousand; and the walk's partition posteriors are sampled with half the fit's
sweeps (:func:`tuning_chain`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from clusterednb.logistic.clusters import (
    LogisticClusters,
    assemble,
    labelled_regression,
    partition_posterior,
)
from clusterednb.logistic.fit import JointData, task_tempering
from clusterednb.logistic.settings import AUTO, FitSettings

EFFECTIVE_ROWS = (np.inf, 100.0, 50.0, 30.0, 15.0, 5.0)
FLOORS = (0.05, 0.2, 0.5, 1.0)
START_EFFECTIVE_ROWS = 30.0
TUNING_TOLERANCE = 1e-4
"""The Newton decrement at which the tuning's regressions stop (each objective, a sum over
thousands of rows, within about that many nats of its minimum: the held-out log-loss, a
mean, moves far less than between settings); the fit's own regressions stop at 1e-8."""
DEVIATION_SCALES = (0.1, 0.3, 1.0, 3.0)
MIN_ROWS = 4
MAX_TUNING_TASKS = 300
DEFAULT_EFFECTIVE_ROWS = 10.0
DEFAULT_FLOOR = 0.2
DEFAULT_DEVIATION_SCALE = 0.0


def tuning_tasks(data: JointData, rng: np.random.Generator) -> np.ndarray:
    """The tasks the settings are chosen on: all of them up to :data:`MAX_TUNING_TASKS`, else
    that many (sorted positions): those with the fewest labelled rows (above none: the task
    a "like-fewest" validation imitates), the rest drawn at random.

    Examples
    --------
    >>> from clusterednb.logistic.fit import JointData
    >>> task = np.repeat(np.arange(400), 3)
    >>> y = np.where(np.arange(1200) % 3 == 0, 1, 0)
    >>> y[3:5] = -1  # task 1 has one labelled row: the fewest
    >>> data = JointData.from_codes(np.zeros((1200, 1), dtype=np.int64), y, task, 400,
    ...                             np.array([0, 1]))
    >>> chosen = tuning_tasks(data, np.random.default_rng(0))
    >>> chosen.size, bool(1 in chosen)
    (300, True)
    """
    if data.n_tasks <= MAX_TUNING_TASKS:
        return np.arange(data.n_tasks)
    counts = np.diff(data.task_starts)
    labelled = counts > 0
    fewest = np.flatnonzero(labelled & (counts == counts[labelled].min())) if labelled.any() else []
    fewest = np.asarray(fewest, dtype=np.int64)
    if fewest.size >= MAX_TUNING_TASKS:
        return np.sort(rng.choice(fewest, MAX_TUNING_TASKS, replace=False))
    others = np.setdiff1d(np.arange(data.n_tasks), fewest)
    drawn = rng.choice(others, MAX_TUNING_TASKS - fewest.size, replace=False)
    return np.sort(np.concatenate([fewest, drawn]))


def tuning_chain(settings: FitSettings) -> FitSettings:
    """The settings of the walk's partition posteriors: half the fit's sweeps and burn-in
    (the walk only ranks settings; the fit's own chain keeps them all).

    Examples
    --------
    >>> chain = tuning_chain(FitSettings(n_sweeps=30, burn_in=10))
    >>> chain.n_sweeps, chain.burn_in
    (15, 5)
    >>> chain = tuning_chain(FitSettings(n_sweeps=1, burn_in=0))
    >>> chain.n_sweeps, chain.burn_in
    (1, 0)
    """
    sweeps = max(1, settings.n_sweeps // 2)
    return replace(settings, n_sweeps=sweeps, burn_in=min(settings.burn_in // 2, sweeps - 1))


def validation_rows(data: JointData, rng: np.random.Generator) -> np.ndarray:
    """Half of the labelled rows of every task with at least ``MIN_ROWS`` of them.

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> data = toy.joint_data()  # tasks of two rows: fewer than MIN_ROWS, none lends any
    >>> validation_rows(data, np.random.default_rng(0)).tolist()
    []
    """
    chosen = []
    for task in range(data.n_tasks):
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        if rows.size >= MIN_ROWS:
            chosen.append(rng.choice(rows, size=rows.size // 2, replace=False))
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


def like_fewest_rows(data: JointData, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Validation rows of pseudo-tasks cut to look like the task with the fewest labels, and
    whether their features stay in the fit (see the module).

    Examples
    --------
    >>> from clusterednb.logistic.fit import JointData
    >>> codes = np.zeros((11, 1), dtype=np.int64)
    >>> y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])  # tasks of 1, 4 and 6 labelled rows
    >>> task = np.array([0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
    >>> data = JointData.from_codes(codes, y, task, 3, np.array([0, 1]))
    >>> held, keep_features = like_fewest_rows(data, np.random.default_rng(0))
    >>> np.unique(data.task[held]).size, held.size in (3, 5), keep_features  # one pseudo-task
    (1, True, False)
    """
    counts = np.diff(data.task_starts)
    lenders = np.flatnonzero(counts >= MIN_ROWS)
    if not np.any(counts > 0) or lenders.size == 0:
        return np.zeros(0, dtype=np.int64), True
    fewest = int(counts[counts > 0].min())
    few_tasks = np.flatnonzero(counts == fewest)
    keep_features = bool(np.any(data.rows_per_task[few_tasks] > fewest))
    pseudo = np.sort(rng.choice(lenders, size=max(1, lenders.size // 3), replace=False))
    held = []
    for task in pseudo:
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        kept = min(fewest, rows.size // 2)
        held.append(rng.permutation(rows)[kept:])
    return np.sort(np.concatenate(held)), keep_features


class Tuning(NamedTuple):
    """What :func:`choose_settings` found.

    Attributes
    ----------
    settings : FitSettings
        ``effective_rows``, ``floor`` and ``deviation_scale`` fixed.
    tried : DataFrame
        The held-out log-loss of every setting tried (empty when none was).
    feature_relevance : ndarray of shape (n_features,) or None
        With ``relevance``: the features' relevance the walk judged, on which the fit then
        clusters too (None when nothing was judged).
    held_rows : ndarray of shape (n_held,)
        Positions in the data of the labelled rows whose labels the walk held out (empty
        when it held none, or chose on a subset of the tasks).
    held_log_loss : float
        The chosen setting's mean log-loss on them (NaN when there are none).
    held_proba : ndarray of shape (n_held,)
        ``P(y = 1)`` of each held row under the chosen setting's clusters.
    """

    settings: FitSettings
    tried: pd.DataFrame
    feature_relevance: np.ndarray | None = None
    held_rows: np.ndarray = np.zeros(0, dtype=np.int64)
    held_log_loss: float = np.nan
    held_proba: np.ndarray = np.zeros(0)


def choose_settings(data: JointData, settings: FitSettings, rng: np.random.Generator) -> Tuning:
    """Settings with ``effective_rows``, ``floor`` and ``deviation_scale`` fixed, and what the
    choice found (:class:`Tuning`).

    A setting given as a number is kept; "auto" is chosen by validation (see the module).
    With no task to lend validation rows, or labels of one class only among them, "auto"
    becomes the defaults (10 effective rows, floor 0.2, no deviations).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> chosen, tried, *_ = choose_settings(toy.joint_data(), FitSettings(),
    ...                                     np.random.default_rng(0))
    >>> chosen.effective_rows, chosen.floor, chosen.deviation_scale, len(tried)  # the defaults
    (10.0, 0.2, 0.0, 0)
    """
    if AUTO not in (settings.effective_rows, settings.floor, settings.deviation_scale):
        return Tuning(settings, pd.DataFrame())
    subset = data.n_tasks > MAX_TUNING_TASKS
    if subset:
        data = data.of_tasks(tuning_tasks(data, rng))
    if settings.validation == "like-fewest":
        held, keep_features = like_fewest_rows(data, rng)
    else:
        held, keep_features = validation_rows(data, rng), True
    if held.size == 0 or np.unique(data.y[held]).size < 2:
        defaults = replace(
            settings,
            effective_rows=_or_default(settings.effective_rows, DEFAULT_EFFECTIVE_ROWS),
            floor=_or_default(settings.floor, DEFAULT_FLOOR),
            deviation_scale=_or_default(settings.deviation_scale, DEFAULT_DEVIATION_SCALE),
        )
        return Tuning(defaults, pd.DataFrame())
    train = data.without_labels(held) if keep_features else data.without_rows(held)
    tried, best, judged = _cluster_settings(data, train, held, settings, rng)
    chosen = settings.with_chosen(best.effective_rows, best.floor)
    if settings.deviation_scale == AUTO:
        tried += _deviation_scales(data, train, held, best, settings.C)
    table = pd.DataFrame(tried)
    winner = table.loc[table["log_loss"].idxmin()]  # the first of equals: no deviation
    if settings.deviation_scale == AUTO:
        chosen = replace(chosen, deviation_scale=float(winner["deviation_scale"]))
    if subset:
        return Tuning(chosen, table, judged)
    return Tuning(chosen, table, judged, held, float(winner["log_loss"]), best.proba)


def _or_default(value, default: float):
    return default if value == AUTO else value


def _held_proba(
    data: JointData, held: np.ndarray, design, clusters: LogisticClusters, with_task: bool
) -> np.ndarray:
    """``P(y = 1)`` of the held rows (their regression ``design``) under ``clusters`` (with
    their tasks' deviations), shape (n_held,)."""
    task = data.task[held]
    return clusters.proba(design, clusters.membership[task], task if with_task else None)


def mean_log_loss(y: np.ndarray, p1: np.ndarray) -> float:
    """Mean negative log-likelihood of labels ``y`` (n,) in {0, 1} under ``P(y = 1) = p1``
    (n,), probabilities clipped to ``[1e-15, 1 − 1e-15]`` (as scikit-learn's ``log_loss``).

    Examples
    --------
    >>> round(mean_log_loss(np.array([1, 0]), np.array([0.8, 0.4])), 6)  # -(ln .8 + ln .6) / 2
    0.366985
    >>> round(mean_log_loss(np.array([1]), np.array([0.0])), 4)  # clipped, not infinite
    34.5388
    """
    clipped = np.clip(p1, 1e-15, 1 - 1e-15)
    return float(-np.mean(np.where(y == 1, np.log(clipped), np.log1p(-clipped))))


class _Best:
    """The best clustering setting so far, its assembled clusters and the held rows'
    ``P(y = 1)`` under them."""

    def __init__(self) -> None:
        self.loss = np.inf
        self.effective_rows = self.floor = 0.0
        self.clusters: LogisticClusters | None = None
        self.proba = np.zeros(0)


def _cluster_settings(
    data: JointData,
    train: JointData,
    held: np.ndarray,
    settings: FitSettings,
    rng: np.random.Generator,
) -> tuple[list[dict], _Best, np.ndarray | None]:
    """Walk the grids of (effective rows, floor) (see the module); what was tried, the best,
    and the features' relevance judged at the first setting (with ``relevance``)."""
    grid = EFFECTIVE_ROWS if settings.effective_rows == AUTO else (settings.effective_rows,)
    floors = FLOORS if settings.floor == AUTO else (settings.floor,)
    scores = _SettingScores(data, train, held, settings, rng, grid, floors)
    start = grid.index(START_EFFECTIVE_ROWS) if START_EFFECTIVE_ROWS in grid else 0
    walk_grid(scores.loss, len(grid), len(floors), start)
    return scores.tried, scores.best, scores.judged_relevance


def walk_grid(loss, n_rows: int, n_floors: int, start: int) -> tuple[int, int]:
    """Walk the grid of ``loss(rows, floor)`` (positions; ``loss`` remembers what it computed):
    from ``(start, 0)`` along the rows (first towards position 0, else the other way) while
    the loss falls, then up the floors while it falls; the highest floor is always tried.
    The position of the least loss met.

    Examples
    --------
    >>> table = np.array([[5, 6], [3, 4], [2, 2.5], [4, 1]])  # rows × floors
    >>> tried = []
    >>> def loss(rows, floor):
    ...     tried.append((rows, floor))
    ...     return table[rows, floor]
    >>> walk_grid(loss, 4, 2, start=1)  # 1 → 0 is worse; 1 → 2 better, 3 worse; floors
    (2, 0)
    >>> tried  # the highest floor was tried on the way
    [(1, 0), (0, 0), (2, 0), (3, 0), (2, 1)]
    >>> walk_grid(lambda rows, floor: table[rows, floor], 4, 2, start=3)  # 2 better, 1 worse
    (2, 0)
    """
    rows = start
    best = loss(rows, 0)
    for step in (-1, 1):
        moved = False
        while 0 <= rows + step < n_rows:
            candidate = loss(rows + step, 0)
            if candidate >= best:
                break
            rows, best, moved = rows + step, candidate, True
        if moved:
            break
    floor, top = 0, n_floors - 1
    while floor < top:
        candidate = loss(rows, floor + 1)
        if candidate >= best:
            if floor + 1 < top and loss(rows, top) < best:
                floor = top
            break
        floor, best = floor + 1, candidate
    return rows, floor


class _SettingScores:
    """Held-out log-loss of grid settings, each computed once when first asked for.

    One partition posterior per value of ``effective_rows`` (shared by every floor; a value
    whose task weights equal an earlier one's shares its partitions and scores), and the
    regressions of each floor started from the last floor's on the same partitions. With
    ``relevance`` the features are judged once, at the first setting tried, and every later
    setting (and the fit after the walk) clusters on the same features (judging them at each
    setting cost 0.19 s a setting on landmine, most of the walk).
    """

    def __init__(self, data, train, held, settings, rng, grid, floors) -> None:
        self.data, self.train, self.held = data, train, held
        self.settings, self.rng = settings, rng
        self.grid, self.floors = grid, floors
        # one design and pooled fit for every setting, solved to TUNING_TOLERANCE
        self.regression = labelled_regression(train, settings, TUNING_TOLERANCE)
        self.design = data.design(held)
        self.held_tasks = np.unique(data.task[held])
        self.clusterings: dict[int, object] = {}
        self.judged_relevance: np.ndarray | None = None  # with relevance: judged once
        self.last: dict[int, LogisticClusters] = {}
        self.losses: dict[tuple[int, int], float] = {}
        self.tried: list[dict] = []
        self.best = _Best()

    def _same_weights_as(self, rows: int) -> int:
        """The first grid position tried with the same task weights as ``rows`` (or itself)."""
        weights = task_tempering(self.train.rows_per_task, float(self.grid[rows]))
        for earlier in self.clusterings:
            tempering = task_tempering(self.train.rows_per_task, float(self.grid[earlier]))
            if np.array_equal(weights, tempering):
                return earlier
        return rows

    def loss(self, rows: int, floor: int) -> float:
        """The held-out log-loss at ``grid[rows]``, ``floors[floor]``."""
        rows = self._same_weights_as(rows)
        if (rows, floor) in self.losses:
            return self.losses[rows, floor]
        effective_rows = self.grid[rows]
        if rows not in self.clusterings:
            chain_settings = tuning_chain(self.settings.with_chosen(effective_rows, 0.0))
            self.clusterings[rows] = partition_posterior(
                self.train, chain_settings, self.rng, self.judged_relevance
            )
            self.judged_relevance = self.clusterings[rows].feature_relevance
        clustering = self.clusterings[rows]
        chosen = self.settings.with_chosen(effective_rows, self.floors[floor])
        clusters = assemble(
            self.train,
            clustering,
            chosen,
            self.regression,
            near=self.last.get(rows),
            for_tasks=self.held_tasks,
        )
        self.last[rows] = clusters
        proba = _held_proba(self.data, self.held, self.design, clusters, with_task=False)
        loss = mean_log_loss(self.data.y[self.held], proba)
        self.losses[rows, floor] = loss
        self.tried.append(
            {
                "effective_rows": effective_rows,
                "floor": self.floors[floor],
                "deviation_scale": 0.0,
                "n_clusters": int(clustering.partition.max()) + 1,
                "log_loss": loss,
            }
        )
        if loss < self.best.loss:
            self.best.loss = loss
            self.best.effective_rows = float(effective_rows)
            self.best.floor = float(self.floors[floor])
            self.best.clusters, self.best.proba = clusters, proba
        return loss


def _deviation_scales(
    data: JointData, train: JointData, held: np.ndarray, best: _Best, C: float
) -> list[dict]:
    """The best clusters with the held tasks' deviations at each of :data:`DEVIATION_SCALES`."""
    clusters = best.clusters
    tasks = np.unique(data.task[held])
    design = data.design(held)
    tried = []
    for scale in DEVIATION_SCALES:
        deviating = clusters.with_deviations(train, scale**2 * C, tasks)
        tried.append(
            {
                "effective_rows": best.effective_rows,
                "floor": best.floor,
                "deviation_scale": scale,
                "n_clusters": int(clusters.partition.max()) + 1,
                "log_loss": mean_log_loss(
                    data.y[held], _held_proba(data, held, design, deviating, with_task=True)
                ),
            }
        )
    return tried
