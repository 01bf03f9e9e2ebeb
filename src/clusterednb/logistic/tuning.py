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
how close it ends to the whole grid: docs/decisions.md. With ``bin_precision="auto"`` and a
table of numbers, the winning setting's regressions are then fitted again under the bins'
priors of :data:`~clusterednb.logistic.settings.BIN_PRECISIONS`, walked the same way from 4
(:func:`bins_walked`).

Above :data:`MAX_TUNING_TASKS` tasks, the settings are chosen on that many (all their rows;
:func:`tuning_tasks`): each partition posterior of the walk costs ``n_tasks × n_clusters``
Cholesky factorisations per sweep, and a few hundred tasks say which setting predicts best
as well as a thousand; and the walk's partition posteriors are sampled with half the fit's
sweeps (:func:`~clusterednb.logistic.grid_walk.tuning_chain`).

With ``relevance``, the best setting's clusters then judge each column's relevance to the
label; the regressions leave out those judged irrelevant when the held-out rows are then
clearly better predicted, and then in the fit too
(:func:`~clusterednb.logistic.grid_walk.label_columns_chosen`); and the clusters read the
columns judged relevant to them, or none if the held rows are clearly better predicted so
(:func:`~clusterednb.logistic.grid_walk.feature_side_chosen`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from clusterednb.logistic.clusters import assemble, design_precision
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.grid_walk import (
    Best,
    SettingScores,
    feature_side_chosen,
    held_proba,
    label_columns_chosen,
    mean_log_loss,
    walk_grid,
)
from clusterednb.logistic.settings import AUTO, BIN_PRECISIONS, FitSettings

EFFECTIVE_ROWS = (np.inf, 100.0, 50.0, 30.0, 15.0, 5.0)
FLOORS = (0.05, 0.2, 0.5, 1.0)
START_EFFECTIVE_ROWS = 30.0
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
    keep_features = _fewest_keep_features(data)
    pseudo = np.sort(rng.choice(lenders, size=max(1, lenders.size // 3), replace=False))
    held = []
    for task in pseudo:
        rows = data.labelled[data.task_starts[task] : data.task_starts[task + 1]]
        kept = min(fewest, rows.size // 2)
        held.append(rng.permutation(rows)[kept:])
    return np.sort(np.concatenate(held)), keep_features


def _fewest_keep_features(data: JointData) -> bool:
    """Whether a task with the fewest labelled rows has unlabelled rows too (then the rows
    a "like-fewest" validation lends keep their features in the fit)."""
    counts = np.diff(data.task_starts)
    fewest = int(counts[counts > 0].min())
    return bool(np.any(data.rows_per_task[np.flatnonzero(counts == fewest)] > fewest))


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
    label_relevance : ndarray of shape (n_features,) or None
        With ``relevance``: each column's judged relevance to the label (None when nothing
        was judged).
    label_columns : ndarray of shape (n_features,) or None
        Bool: the columns the regressions read, when the walk left some out (else None).
    differing : ndarray of shape (n_features,) or None
        Bool: the columns whose label weights the partitions let differ between clusters,
        when a walk again held the others shared (:func:`floors_rewalked`; else None: all
        differ), which the fit's partition keeps.
    """

    settings: FitSettings
    tried: pd.DataFrame
    feature_relevance: np.ndarray | None = None
    held_rows: np.ndarray = np.zeros(0, dtype=np.int64)
    held_log_loss: float = np.nan
    held_proba: np.ndarray = np.zeros(0)
    label_relevance: np.ndarray | None = None
    label_columns: np.ndarray | None = None
    differing: np.ndarray | None = None


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
    choose_bins = settings.bin_precision == AUTO and has_bins(data)
    settings = settings.with_bins_resolved()  # the walk's; the bins' walk after it
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
    tried, best, judged, label = _cluster_settings(data, train, held, settings, rng, choose_bins)
    if label[1] is not None:
        data, train = data.reading(label[1]), train.reading(label[1])
    chosen = replace(
        settings.with_chosen(best.effective_rows, best.floor), bin_precision=best.bin_precision
    )
    if settings.deviation_scale == AUTO:
        tried += _deviation_scales(data, train, held, best, settings.C)
    table = pd.DataFrame(tried)
    winner = table.loc[table["log_loss"].idxmin()]  # the first of equals: no deviation
    held_loss = mean_log_loss(data.y[held], best.proba)  # the chosen clusters'
    if settings.deviation_scale == AUTO:
        chosen = replace(chosen, deviation_scale=float(winner["deviation_scale"]))
        held_loss = float(winner["log_loss"])
    if subset:
        return Tuning(chosen, table, judged, label_relevance=label[0], label_columns=label[1])
    return Tuning(chosen, table, judged, held, held_loss, best.proba, *label)


def floors_rewalked(
    data: JointData,
    settings: FitSettings,
    rng: np.random.Generator,
    first: Tuning,
    differing: np.ndarray,
    columns: np.ndarray | None,
) -> Tuning | None:
    """The floors of ``first``'s chosen effective rows walked again on its held rows and its
    features' relevance, with the partitions' score holding shared the label weights of the
    columns not ``differing`` (bool, (n_features,)) and the regressions reading ``columns``
    (bool, (n_features,); None: all); its ``held_log_loss`` the chosen floor's mean log-loss
    on the held rows. None where ``first`` held no rows (settings given, defaults, or chosen
    on a subset of the tasks).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> first = choose_settings(toy.joint_data(), FitSettings(), np.random.default_rng(0))
    >>> floors_rewalked(toy.joint_data(), FitSettings(), np.random.default_rng(0), first,
    ...                 np.array([False]), None) is None  # toy tasks lend no rows: defaults
    True
    """
    held = first.held_rows
    if held.size == 0:
        return None
    keep_features = settings.validation != "like-fewest" or _fewest_keep_features(data)
    train = data.without_labels(held) if keep_features else data.without_rows(held)
    data, train = data.reading(columns), train.reading(columns)
    grid = EFFECTIVE_ROWS if settings.effective_rows == AUTO else (settings.effective_rows,)
    floors = FLOORS if settings.floor == AUTO else (settings.floor,)
    walked = replace(settings, bin_precision=first.settings.bin_precision)  # the bins chosen
    args = (walked, rng, grid, floors, first.feature_relevance, differing)
    scores = SettingScores(data, train, held, *args)
    scores.walk_floors(grid.index(first.settings.effective_rows))
    best = scores.best
    return first._replace(
        settings=replace(first.settings, floor=best.floor),
        tried=pd.concat([first.tried, pd.DataFrame(scores.tried)], ignore_index=True),
        held_log_loss=mean_log_loss(data.y[held], best.proba),
        held_proba=best.proba,
        label_columns=columns,
        differing=differing,
    )


def _or_default(value, default: float):
    return default if value == AUTO else value


def _cluster_settings(
    data: JointData,
    train: JointData,
    held: np.ndarray,
    settings: FitSettings,
    rng: np.random.Generator,
    choose_bins: bool = False,
) -> tuple[list[dict], Best, np.ndarray | None, tuple[np.ndarray | None, np.ndarray | None]]:
    """Walk the grids of (effective rows, floor) (see the module), then, with
    ``choose_bins``, the bins' prior at the best of them (:func:`bins_walked`); what was
    tried, the best, the features' relevance judged at the first setting, and the columns'
    relevance to the label with the columns the regressions read (with ``relevance``; else
    None each)."""
    grid = EFFECTIVE_ROWS if settings.effective_rows == AUTO else (settings.effective_rows,)
    floors = FLOORS if settings.floor == AUTO else (settings.floor,)
    scores = SettingScores(data, train, held, settings, rng, grid, floors)
    start = grid.index(START_EFFECTIVE_ROWS) if START_EFFECTIVE_ROWS in grid else 0
    walk_grid(scores.loss, len(grid), len(floors), start)
    label, rejected = (None, None), []
    if settings.relevance and not data.documents:
        scores, *label, rejected = label_columns_chosen(scores)
        scores, bare = feature_side_chosen(scores)
        rejected += bare
    bins = bins_walked(scores) if choose_bins else []
    return rejected + scores.tried + bins, scores.best, scores.judged_relevance, tuple(label)


def _deviation_scales(
    data: JointData, train: JointData, held: np.ndarray, best: Best, C: float
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
                    data.y[held], held_proba(data, held, design, deviating, with_task=True)
                ),
            }
        )
    return tried


def has_bins(data: JointData) -> bool:
    """Whether ``data``'s regressions read a numeric column's bins (whose prior
    ``bin_precision`` sets).

    Examples
    --------
    >>> from clusterednb.examples import logistic as toy
    >>> has_bins(toy.joint_data())  # categories only
    False
    """
    return bool(np.any(design_precision(data, 2.0) != 1.0))


def bins_walked(scores: SettingScores) -> list[dict]:
    """Walk :data:`~clusterednb.logistic.settings.BIN_PRECISIONS` at ``scores``' best setting
    (16, 64, 256 while the held rows' mean log-loss falls, else 1; only the regressions are
    fitted again, from the setting's own); ``scores.best`` becomes the best precision's
    clusters (its ``bin_precision`` the precision), and what was tried is returned, one row
    per precision fitted (the walked setting's own row is already in ``scores.tried``).

    Parameters
    ----------
    scores : SettingScores
        The walk's scores, its settings' ``bin_precision`` the one the walk was fitted under
        (:data:`~clusterednb.logistic.settings.DEFAULT_BIN_PRECISION`).

    Returns
    -------
    list of dict
        ``effective_rows``, ``floor``, ``deviation_scale`` (0), ``bin_precision``,
        ``n_clusters`` and ``log_loss`` of each precision tried.
    """
    best = scores.best
    if best.clusters is None or best.rows not in scores.clusterings:
        return []
    walked = float(scores.settings.bin_precision)
    losses = {BIN_PRECISIONS.index(walked): best.loss}
    tried: list[dict] = []

    def loss(position: int, _floor: int) -> float:
        if position not in losses:
            losses[position] = _bins_loss(scores, BIN_PRECISIONS[position], tried)
        return losses[position]

    walk_grid(loss, len(BIN_PRECISIONS), 1, BIN_PRECISIONS.index(walked))
    return tried


def _bins_loss(scores: SettingScores, bin_precision: float, tried: list[dict]) -> float:
    """The held rows' mean log-loss of the best setting's clusters fitted again with the bins'
    prior ``bin_precision``; ``scores.best`` takes them where they beat it."""
    best = scores.best
    settings = replace(scores.settings, bin_precision=bin_precision).with_chosen(
        best.effective_rows, best.floor
    )
    near = best.clusters
    precision = design_precision(scores.train, bin_precision)
    regression = scores.regression.with_precision(precision, settings.C)
    regression.pooled_start = np.append(near.coef[-1], near.intercept[-1])
    clustering = scores.clusterings[best.rows]
    clusters = assemble(
        scores.train, clustering, settings, regression, near=near, for_tasks=scores.held_tasks
    )
    proba = held_proba(scores.data, scores.held, scores.design, clusters, with_task=False)
    loss = mean_log_loss(scores.data.y[scores.held], proba)
    tried.append(
        {
            "effective_rows": best.effective_rows,
            "floor": best.floor,
            "deviation_scale": 0.0,
            "bin_precision": bin_precision,
            "n_clusters": int(clustering.partition.max()) + 1,
            "log_loss": loss,
        }
    )
    if loss < best.loss:
        best.loss, best.bin_precision = loss, bin_precision
        best.clusters, best.proba = clusters, proba
    return loss
