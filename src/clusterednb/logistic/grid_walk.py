"""The walk of :mod:`~clusterednb.logistic.tuning` on the grid of (effective rows, floor):
each setting's held-out log-loss (:class:`SettingScores`), the order the walk tries them in
(:func:`walk_grid`), and, with ``relevance``, whether the regressions leave out the columns
judged irrelevant to the label (:func:`label_columns_chosen`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from clusterednb.logistic.clustering.feature_relevance import RELEVANT, bounded_heterogeneity
from clusterednb.logistic.clustering.label_relevance import (
    WITHIN_TASK_Z,
    kept_columns,
    pooled_dependence,
    silent_columns,
    within_task_dependence,
)
from clusterednb.logistic.clusters import LogisticClusters, assemble, labelled_regression
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.partition import partition_posterior
from clusterednb.logistic.settings import FitSettings, median_task_rows, task_tempering
from clusterednb.seeding import side_stream
from clusterednb.stats.task_auc import mean_task_auc

CLEAR_GAIN = 2.5
"""Standard errors (of the held rows' paired differences) by which a set of columns must
lower the held rows' mean log-loss below every column's to be taken. The held rows of all
the tasks are one sample, so a chance gain would be taken for every target of an evaluation
at once; with up to four sets tried, 2.5 keeps the chance of taking one by chance near
2.5 %. Measured: 0.9–2.1 on computer-survey, where leaving columns out lost 0.013 AUC at
k = 8; 2.0 on a clean table of 6 rows a task, where it lost 0.13 on one seed; 2.6–7.5 with
12 to 20 noise columns, where it gains 0.1–0.3."""
SILENCE_ROWS = 8
"""Labelled rows the median task needs before silence within tasks counts: with six, the
tests missed slopes of 1.5 and 3 (a round that left three signals out cost 0.12 AUC)."""
LABEL_ROUNDS = 3
"""Most times the columns' relevance to the label is judged again on the clusters the
columns kept before give (:func:`label_columns_chosen`)."""

TUNING_TOLERANCE = 1e-4
"""The Newton decrement at which the tuning's regressions stop (each objective, a sum over
thousands of rows, within about that many nats of its minimum: the held-out log-loss, a
mean, moves far less than between settings); the fit's own regressions stop at 1e-8."""


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


def held_proba(
    data: JointData, held: np.ndarray, design, clusters: LogisticClusters, with_task: bool
) -> np.ndarray:
    """``P(y = 1)`` of the held rows (their regression ``design``) under ``clusters`` (with
    their tasks' deviations), shape (n_held,)."""
    task = data.task[held]
    return clusters.proba(design, clusters.membership[task], task if with_task else None)


def row_log_loss(y: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """Each row's negative log-likelihood, shape (n,), probabilities clipped as in
    :func:`mean_log_loss`.

    Examples
    --------
    >>> row_log_loss(np.array([1, 0]), np.array([0.5, 0.5])).round(6).tolist()
    [0.693147, 0.693147]
    """
    clipped = np.clip(p1, 1e-15, 1 - 1e-15)
    return -np.where(y == 1, np.log(clipped), np.log1p(-clipped))


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
    return float(np.mean(row_log_loss(y, p1)))


class Best:
    """The best clustering setting so far, its assembled clusters and the held rows'
    ``P(y = 1)`` under them."""

    def __init__(self) -> None:
        self.loss = np.inf
        self.effective_rows = self.floor = 0.0
        self.bin_precision = np.nan  # the bins' prior its regressions were fitted under
        self.rows = 0  # the grid position of effective_rows
        self.clusters: LogisticClusters | None = None
        self.proba = np.zeros(0)


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


class SettingScores:
    """Held-out log-loss of grid settings, each computed once when first asked for.

    One partition posterior per value of ``effective_rows`` (shared by every floor; a value
    whose task weights equal an earlier one's shares its partitions and scores), and the
    regressions of each floor started from the last floor's on the same partitions. With
    ``relevance`` the features are judged once, at the first setting tried, and every later
    setting (and the fit after the walk) clusters on the same features (judging them at each
    setting cost 0.19 s a setting on landmine, most of the walk).
    """

    def __init__(
        self, data, train, held, settings, rng, grid, floors, judged=None, differing=None
    ) -> None:
        self.data, self.train, self.held = data, train, held
        self.settings, self.rng, self.grid, self.floors = settings, rng, grid, floors
        # one design and pooled fit for every setting, solved to TUNING_TOLERANCE
        self.regression = labelled_regression(train, settings, TUNING_TOLERANCE)
        self.design = data.design(held)
        self.held_tasks = np.unique(data.task[held])
        self.clusterings: dict[int, object] = {}
        self.judged_relevance: np.ndarray | None = judged  # with relevance: judged once
        self.differing = differing  # the features whose label weights differ (None: all)
        self.last: dict[int, LogisticClusters] = {}
        self.losses: dict[tuple[int, int], float] = {}
        self.tried: list[dict] = []
        self.best = Best()

    def _same_weights_as(self, rows: int) -> int:
        """The first grid position tried with the same task weights as ``rows`` (or itself)."""
        weights = task_tempering(self.train.rows_per_task, float(self.grid[rows]))
        for earlier in self.clusterings:
            tempering = task_tempering(self.train.rows_per_task, float(self.grid[earlier]))
            if np.array_equal(weights, tempering):
                return earlier
        return rows

    def walk_floors(self, rows: int) -> None:
        """Score the floors at grid position ``rows`` as :func:`walk_grid` does (up while
        the loss falls, and the highest)."""
        walk_grid(lambda _, floor: self.loss(rows, floor), 1, len(self.floors), 0)

    def loss(self, rows: int, floor: int) -> float:
        """The held-out log-loss at ``grid[rows]``, ``floors[floor]``."""
        rows = self._same_weights_as(rows)
        if (rows, floor) in self.losses:
            return self.losses[rows, floor]
        effective_rows = self.grid[rows]
        if rows not in self.clusterings:
            chain_settings = tuning_chain(self.settings.with_chosen(effective_rows, 0.0))
            self.clusterings[rows] = partition_posterior(
                self.train, chain_settings, self.rng, self.judged_relevance, self.differing
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
        proba = held_proba(self.data, self.held, self.design, clusters, with_task=False)
        loss = mean_log_loss(self.data.y[self.held], proba)
        self.losses[rows, floor] = loss
        self.tried.append(
            {
                "effective_rows": effective_rows,
                "floor": self.floors[floor],
                "deviation_scale": 0.0,
                "bin_precision": float(chosen.bin_precision),
                "n_clusters": int(clustering.partition.max()) + 1,
                "columns": _columns_read(self.train),
                "cluster_columns": _columns_clustered(self.train, self.judged_relevance),
                "log_loss": loss,
            }
        )
        if loss < self.best.loss:
            self.best.loss = loss
            self.best.effective_rows, self.best.rows = float(effective_rows), rows
            self.best.floor = float(self.floors[floor])
            self.best.bin_precision = float(chosen.bin_precision)
            self.best.clusters, self.best.proba = clusters, proba
        return loss


def _columns_clustered(data: JointData, judged: np.ndarray | None) -> int:
    """How many features the clusters' feature side reads."""
    return int(data.offsets.size - 1 if judged is None else (judged >= RELEVANT).sum())


def feature_side_chosen(scores: SettingScores) -> tuple[SettingScores, list[dict]]:
    """Whether the clusters read the features the clusters' relevance kept, or none: the
    one that predicts the held-out rows better at the best setting's effective rows (each at
    its best floor).

    No features must beat them clearly (:func:`_clearly_best`). The clusters' relevance
    (:mod:`~clusterednb.logistic.clustering.feature_relevance`)
    scores each column alone: twenty noise columns that share one latent factor row by row
    shift together from task to task, and read as independent they look like twenty
    columns that differ between clusters. Clusters of the labels alone then predict better,
    and the held-out rows say so.

    Returns
    -------
    scores : SettingScores
        The scores taken (``judged_relevance`` all zero when the clusters read no feature).
    rejected : list of dict
        What was scored on the other (for the table of settings tried).
    """
    judged = scores.judged_relevance
    if judged is None or not (judged >= RELEVANT).any():
        return scores, []
    bare = SettingScores(
        scores.data,
        scores.train,
        scores.held,
        scores.settings,
        side_stream(scores.rng),
        scores.grid,
        scores.floors,
        np.zeros_like(judged),
    )
    bare.walk_floors(scores.best.rows)
    if _clearly_best([scores, bare]) == 1:
        return bare, scores.tried
    return scores, bare.tried


def _columns_read(data: JointData) -> int:
    """How many features the regressions of ``data`` read."""
    columns = data.label_columns
    return int(data.offsets.size - 1 if columns is None else columns.sum())


def label_columns_chosen(
    scores: SettingScores,
) -> tuple[SettingScores, np.ndarray, np.ndarray | None, list[dict]]:
    """After the walk on every column: judge the columns' relevance to the label on the best
    setting's clusters, and keep the regressions off those judged irrelevant when that
    predicts the held-out rows clearly better at the best setting's effective rows (each set
    of columns at its best floor; :mod:`~clusterednb.logistic.clustering.label_relevance`).

    A column that depends on the label within tasks beyond chance
    (:func:`~clusterednb.logistic.clustering.label_relevance.within_task_dependence`) is
    kept whatever the clusters say: noise can merge every task into one cluster, where a
    column whose slope changes sign between groups looks irrelevant. The judgement is made
    again on the clusters the kept columns give, up to :data:`LABEL_ROUNDS` times while the
    kept columns change; these later rounds only add columns back (in clusters that merge
    two groups, a column whose slope differs between them looks irrelevant too). A round is
    taken only if it predicts the held rows clearly better than every column
    (:func:`_clearly_best`); the comparison favours every column too (their effective rows
    were chosen for them).

    Columns silent by every test (:func:`~clusterednb.logistic.clustering.label_relevance.
    silent_columns`) get a round of their own, taken on any fall of the held rows' log-loss
    (``lenient`` in :func:`_clearly_best`; the later rounds keep them out): one to five noise
    columns lower it by less than the trial asks, and cost 0.01–0.03 AUC. Only where the
    median task has :data:`SILENCE_ROWS` labelled rows. A number relevant in that round's
    clusters (by its bins or its slope, which the first round's clusters can hide) may return.

    Returns
    -------
    scores : SettingScores
        The scores of the winning set of columns (its ``best`` the setting chosen).
    relevance : ndarray of shape (n_features,)
        As judged on the winning round's clusters (a column kept for its dependence within
        tasks may score low here).
    columns : ndarray of shape (n_features,) or None
        Bool, the columns the regressions read; None: all of them.
    rejected : list of dict
        What was scored on the sets of columns not taken (for the table of settings tried).
    """
    train, at = scores.train, scores.best.rows
    rows = train.labelled
    tests_rng = side_stream(scores.rng)
    labelled = (train.codes[rows], train.y[rows])
    numbers = {"numbers": train.numeric[rows], "numbered": train.numeric_features}
    dependence = within_task_dependence(
        *labelled, train.task[rows], train.offsets, tests_rng, **numbers
    )
    rounds = [(scores, _judged(scores), None)]
    pooled = pooled_dependence(*labelled, train.offsets, tests_rng, **numbers)
    sampled = np.zeros(dependence.size)  # the design test only where a column could be silent
    if silent_columns(rounds[0][1], dependence, pooled, sampled).any():
        sampled = bounded_heterogeneity(
            train.codes, train.task, train.n_tasks, train.offsets, tests_rng
        )
    silent = silent_columns(rounds[0][1], dependence, pooled, sampled)
    lenient, numbered = (), np.isin(np.arange(silent.size), train.numeric_features)
    if silent.any() and not silent.all() and _within_tests_hear(train.task[rows]):
        quiet = _reading(scores, ~silent, at)
        rounds.append((quiet, _judged(quiet), ~silent))
        lenient = (1,)
    while len(rounds) <= LABEL_ROUNDS + len(lenient):
        previous, relevance = rounds[-1][2], rounds[-1][1]
        columns = kept_columns(relevance) | (dependence > WITHIN_TASK_Z)
        if len(rounds) > 1 + len(lenient):  # later rounds only add back what new clusters reveal
            columns |= previous
        elif previous is not None:  # after the silent round a silent column stays out, but
            columns &= previous | (numbered & kept_columns(relevance))  # a number heard here
        if columns.all() or any(_same(columns, kept) for *_, kept in rounds):
            break
        fewer = _reading(scores, columns, at)
        rounds.append((fewer, _judged(fewer), columns))
    best = _clearly_best([candidate for candidate, *_ in rounds], lenient)
    chosen, _, columns = rounds[best]
    rejected = [row for r, (other, *_) in enumerate(rounds) if r != best for row in other.tried]
    return chosen, rounds[best][1], columns, rejected


def _within_tests_hear(task: np.ndarray) -> bool:
    """Whether the median task with labelled rows has :data:`SILENCE_ROWS` of them (``task``,
    (n_labelled,), each labelled row's task).

    Examples
    --------
    >>> _within_tests_hear(np.repeat([0, 1, 2], [10, 9, 2]))
    True
    >>> _within_tests_hear(np.repeat([0, 1], 6))
    False
    """
    return median_task_rows(np.bincount(task)) >= SILENCE_ROWS


def _reading(scores: SettingScores, columns: np.ndarray, at: int) -> SettingScores:
    """The floors at grid position ``at`` scored with the regressions reading ``columns``
    only (bool, (n_features,)), on the partitions of ``scores``' judged features."""
    fewer = SettingScores(
        scores.data.reading(columns),
        scores.train.reading(columns),
        scores.held,
        scores.settings,
        side_stream(scores.rng),
        scores.grid,
        scores.floors,
        scores.judged_relevance,
    )
    fewer.walk_floors(at)
    return fewer


def _clearly_best(rounds: list[SettingScores], lenient: tuple[int, ...] = ()) -> int:
    """The position of the round that predicts the held rows best, among those that beat the
    first (every column) clearly, else 0: a round's mean log-loss must fall below the
    first's by :data:`CLEAR_GAIN` standard errors of the rows' paired differences, and its
    held rows must rank no worse within tasks (the mean AUC within tasks, the evaluation's
    own measure: a set of columns can lower the log-loss by predicting every task alike,
    with nothing left to tell one user's rows apart). A ``lenient`` round (one that leaves
    out only columns every test calls silent) need only lower the mean log-loss: the ranks
    of 100 held rows move by a few hundredths by chance (issue 49's population with five
    noise columns: 0.838 against 0.815 on one seed, where leaving the noise out gave the
    test rows 0.885 against 0.842).

    Examples
    --------
    >>> class Round:  # what the choice reads of a SettingScores
    ...     def __init__(self, proba):
    ...         self.data = Round.data
    ...         self.held, self.best = np.arange(8), type("B", (), {"proba": np.array(proba)})
    >>> Round.data = type("D", (), {"y": np.array([1, 0] * 4), "task": np.repeat([0, 1], 4)})
    >>> every = Round([0.6, 0.4] * 4)
    >>> slightly = Round([0.6, 0.4] * 3 + [0.62, 0.38])  # a small gain, on two rows
    >>> _clearly_best([every, slightly]), _clearly_best([every, slightly], lenient=(1,))
    (0, 1)
    """
    first = rounds[0]
    y, task = first.data.y[first.held], first.data.task[first.held]
    if y.size < 2:
        return 0
    losses = np.array([row_log_loss(y, scores.best.proba) for scores in rounds])
    gains = losses[0] - losses
    errors = gains.std(axis=1, ddof=1) / np.sqrt(max(y.size, 1))
    aucs = np.array([mean_task_auc(y, scores.best.proba, task) for scores in rounds])
    ranks = np.isnan(aucs) | (aucs >= aucs[0])
    clear = (gains.mean(axis=1) > CLEAR_GAIN * errors) & ranks
    lenient = np.isin(np.arange(len(rounds)), lenient)
    clear[lenient] = gains.mean(axis=1)[lenient] > 0.0
    clear[0] = False
    if not clear.any():
        return 0
    return int(np.argmax(np.where(clear, gains.mean(axis=1), -np.inf)))


def _same(columns: np.ndarray, kept: np.ndarray | None) -> bool:
    return kept is not None and bool(np.array_equal(columns, kept))


def _judged(scores: SettingScores) -> np.ndarray:
    """The columns' relevance to the label in the clusters of ``scores``' best setting,
    shape (n_features,)."""
    return scores.train.label_relevance_in(scores.best.clusters.partition, scores.settings.beta)
