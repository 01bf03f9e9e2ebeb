"""Which columns the relevance engines may judge relevant: a screen of each column on the
tasks' counts, before the sampler reads them together.

The relevance engines (:mod:`~clusterednb.inference.relevance`, the variational one) score
the columns as independent given the partition. Twenty noise columns that share one latent
factor row by row then shift together from task to task by chance, and read as twenty
independent columns they look like clusters (issue 49's population with correlated noise:
AUC 0.695 against 0.805 clean). Each column is therefore screened alone first. A column
relevant to the clusters has its class-conditional values differ between clusters, so it
must show at least one of two things beyond chance (``N_DRAWS`` and the early stops:
:mod:`~clusterednb.inference.screen_draws`):

- its values differ between tasks (:func:`heterogeneity`: a categorical per task against one
  shared, against ``N_DRAWS`` random deals of its values to the tasks, each task's count
  of them kept), or
- it depends on the label within tasks (:func:`dependence`: a categorical per (task, class)
  against one per task, against ``N_DRAWS`` shuffles of the labels within each task; a
  column binned from numbers is scored instead by ``Σ_u n_u r_u²``, ``r_u`` the correlation
  of its bin with the label in task ``u``, which sees a slope of 1.5 at ten rows a task where
  the categorical does not).

A column that stands more than :data:`SCREEN_Z` standard deviations above chance on neither
is held shared by every task (:func:`held_shared`): the engine runs on the other columns
(:func:`restricted`), and its answer predicts the held ones from the pooled counts
(:func:`with_held_columns`). Columns screened alone cannot add up: one noise column shows
nothing, and twenty that move together show twenty times nothing.

A designed column is never held (:func:`screened`): one whose values are spread over the
tasks more evenly than random deals leave them, by more than
:data:`~clusterednb.stats.column_tests.DESIGNED_Z` standard deviations (every task holds the
same balanced values, as in a survey where every person rated the same products). The
engines keep it relevant: it cannot differ between tasks, its label tests against shuffles
are not to be believed, and what differs between people is how they weigh it.

The shuffles draw from the counts (a column's values are exchangeable within what is
kept), so the screen needs no rows, and at most :data:`MAX_SCREENED_TASKS` tasks and
:data:`MAX_SCREENED_VALUES` counted values: above that, the tasks screened are a random
subset within both.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.special import ndtri_exp

from clusterednb.data.schema import FeatureSchema
from clusterednb.inference.relevance import shared_evidence
from clusterednb.inference.result import ClusteringResult
from clusterednb.inference.screen_draws import (
    ColumnStreams,
    GiveUp,
    above_draws,
    entries_by_column,
    entries_of,
)
from clusterednb.inference.screen_release import most_probable_switches
from clusterednb.models.observation import DirichletNB
from clusterednb.seeding import data_stream
from clusterednb.stats.column_tests import (
    DESIGNED_Z,
    class_split_evidence,
    designed,
    group_split_evidence,
    ordinal_correlations,
)
from clusterednb.stats.counts import Counts
from clusterednb.stats.kernels import dealt_counts
from clusterednb.stats.permutation_moments import log_table_chance, pearson_z, proportional
from clusterednb.stats.sparse_counts import SparseCounts

SCREEN_Z = 4.0
"""Standard deviations above chance by which a column must differ between tasks, or depend
on the label within them, for the engines to read it. A column drawn at random passes one
test with a chance of 2.4e-4 on 30 deals (``√(31/30)`` times Student's t with 29 degrees of
freedom). At 3 s.d. that chance was 3.1e-3, and a table of twenty noise columns (forty
tests) let one through in about one fit of eight: issue 49's population with correlated
noise lost 0.03 AUC on a seed at 5 and at 20 noise columns. The population's signal columns
stand 4.3 s.d. and more with 10 rows a task; a weaker one held at 4 s.d. is weighed again
on the clusters the others find (:mod:`~clusterednb.inference.screen_release`)."""
MAX_SCREENED_VALUES = 2_000_000
"""Most counted values (rows × columns) the screen reads."""
MAX_SCREENED_TASKS = 2_000
"""Most tasks the screen reads (its tables hold tasks × classes × values)."""
MOMENTS_CLEAR_Z = 30.0
"""Standard deviations above its exact mean over deals (Pearson's X²) by which a column stands
clear of chance between tasks with no deal: a column dealt at random stands so far above with
a chance of at most 1 / 901, 1.1e-3, by Cantelli's inequality whatever the law's shape, and
below 1e-10 where the law is near a chi-square of any degrees of freedom (30 s.d. above the
mean of χ²₁ is a tail of 4e-11). Landmine's fields stand 35–570 s.d. above, MovieLens's
clear columns 31–140."""
HETEROGENEITY_SALT, DEPENDENCE_SALT, SUBSET_SALT = 1, 2, 3
"""What each test adds to the seed drawn from its data (``rng`` None): the two tests of one
column, and the subset of tasks, draw from streams of their own."""


def held_shared(
    counts: Counts | SparseCounts,
    offsets: np.ndarray,
    ordinal: np.ndarray,
    rng: np.random.Generator | None,
    beta: float = 1.0,
) -> np.ndarray:
    """The columns the screen holds shared: neither differing between tasks nor depending on
    the label within them beyond chance, bool of shape (n_features,). When every column
    would be held, none is (the engine then judges them all, as without the screen).

    Parameters
    ----------
    counts : Counts or SparseCounts
        The tasks' counts (of at most :data:`MAX_SCREENED_TASKS` of them, made dense).
    offsets : ndarray of shape (n_features + 1,)
    ordinal : ndarray of shape (n_features,)
        Bool: the columns whose values are ordered bins of a number.
    rng : numpy.random.Generator or None
        The shuffles' source; None: each column's shuffles are seeded by its own counts
        (and a subset of tasks by the tasks' totals), so the verdicts are a function of the
        table (what naive Bayes's engines use: an exact or BHC fit stays deterministic).
    beta : float, default=1.0
        Dirichlet pseudo-count of the screen's categoricals.

    Examples
    --------
    Forty tasks of ten rows. Column 0 follows the label with a sign that changes from task
    to task; column 1 is drawn alike everywhere, whatever the label:

    >>> rng = np.random.default_rng(0)
    >>> task = np.repeat(np.arange(40), 10)
    >>> y = rng.integers(0, 2, 400)
    >>> follows = np.where(task % 2 == 0, y, 1 - y)
    >>> codes = np.column_stack([follows, rng.integers(0, 3, 400)])
    >>> counts = Counts.from_codes(codes, y, task, n_tasks=40, n_classes=2,
    ...                            offsets=np.array([0, 2, 5]))
    >>> held_shared(counts, np.array([0, 2, 5]), np.array([False, False]),
    ...             np.random.default_rng(1)).tolist()
    [False, True]
    """
    return screened(counts, offsets, ordinal, rng, beta)[0]


def screened(
    counts: Counts | SparseCounts,
    offsets: np.ndarray,
    ordinal: np.ndarray,
    rng: np.random.Generator | None,
    beta: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`held_shared`'s columns, and the designed ones (bool, each (n_features,)):
    spread over the tasks more evenly than :data:`~clusterednb.stats.column_tests.DESIGNED_Z`
    standard deviations below random deals. A designed column is never held, and the
    engines keep it relevant: every task holds the same balanced values (a survey where
    every person rated the same computers), so it cannot differ between tasks, and within
    them its label tests are not to be believed; what differs between people is how they
    weigh it, which only its own categorical per cluster keeps (computer-survey: every column
    designed, and judging them lost 0.006–0.019 AUC).

    Examples
    --------
    >>> task = np.repeat(np.arange(30), 8)
    >>> y = np.tile([0, 1], 120)
    >>> balanced, drawn = np.tile(np.arange(4), 60), np.random.default_rng(0).integers(0, 4, 240)
    >>> codes = np.column_stack([balanced, drawn])
    >>> counts = Counts.from_codes(codes, y, task, n_tasks=30, n_classes=2,
    ...                            offsets=np.array([0, 4, 8]))
    >>> held, designed = screened(counts, np.array([0, 4, 8]), np.zeros(2, dtype=bool),
    ...                           np.random.default_rng(1))
    >>> designed.tolist(), held.tolist()
    ([True, False], [False, True])
    """
    counts = _within_budget(counts, rng)
    if counts is None:  # too large to screen: nothing held, nothing designed
        nothing = np.zeros(offsets.size - 1, dtype=bool)
        return nothing, nothing.copy()
    spread = heterogeneity(counts, offsets, rng, beta)
    is_designed = designed(spread)
    held = (spread <= SCREEN_Z) & ~is_designed
    if held.any():  # only what does not differ between tasks needs the second test
        values = held[_feature_of(offsets)]
        widths = np.diff(offsets)[held]
        depend = dependence(
            counts[:, :, values],
            np.concatenate([[0], np.cumsum(widths)]),
            np.asarray(ordinal, dtype=bool)[held],
            rng,
            beta,
        )
        held[held] = depend <= SCREEN_Z
    return (np.zeros_like(held) if held.all() else held), is_designed


def _streams(
    rng: np.random.Generator | None,
    value_counts: np.ndarray,
    offsets: np.ndarray,
    salt: int,
    columns: np.ndarray | None = None,
) -> ColumnStreams:
    """The streams of a test's ``columns`` (default every column): from ``rng``, or seeded by
    each column's counts."""
    columns = np.arange(offsets.size - 1) if columns is None else columns
    if rng is None:
        return ColumnStreams.of_columns(value_counts, offsets, salt, columns)
    return ColumnStreams.from_rng(rng, columns)


def heterogeneity(
    value_counts: np.ndarray,
    offsets: np.ndarray,
    rng: np.random.Generator | None,
    beta: float = 1.0,
    give_up: GiveUp = None,
) -> np.ndarray:
    """How far each column's values differ between tasks beyond chance, in standard
    deviations, shape (n_features,).

    Where the exact law of the deals decides a column (:func:`_decided_exactly`: landmine's
    nine fields, the survey's thirteen), that z is its answer. Every other column is scored
    by the log Bayes factor of a Dirichlet–categorical per task against one shared, against
    ``N_DRAWS`` deals of the column's values to the tasks (each task's count of the column's
    values kept; fewer where it stands clear early:
    :func:`~clusterednb.inference.screen_draws.above_draws`). ``rng`` None: each column's
    deals are seeded by its own counts
    (:meth:`~clusterednb.inference.screen_draws.ColumnStreams.of_columns`). ``give_up``: as
    in :func:`~clusterednb.inference.screen_draws.above_draws`, of the table's positions."""
    by_task = value_counts.sum(axis=1)  # (U, V)
    z = _decided_exactly(by_task, offsets)
    drawn = np.flatnonzero(np.isnan(z))
    streams = _streams(rng, value_counts, offsets, HETEROGENEITY_SALT, drawn)
    if drawn.size:
        kept = np.isin(_feature_of(offsets), drawn)
        widths = np.diff(offsets)[drawn]
        of_table = None if give_up is None else lambda undecided: give_up(drawn[undecided])
        z[drawn] = _dealt_heterogeneity(
            by_task[:, kept], np.concatenate([[0], np.cumsum(widths)]), streams, beta, of_table
        )
    return z


def _decided_exactly(by_task: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The z of the columns of ``by_task`` (U, V) that the exact law of the deals decides,
    NaN for the others, shape (n_features,):

    - Pearson's X² more than :data:`MOMENTS_CLEAR_Z` standard deviations above its exact mean
      (:func:`~clusterednb.stats.permutation_moments.pearson_z`): that z. Dealt at random a
      column stands so far above with a chance of at most 1 / (1 + z²) whatever the law
      (Cantelli; landmine's fields stand 35–570 s.d. above).
    - a table in its margins' exact proportions (X² = 0, the one such table:
      :func:`~clusterednb.stats.permutation_moments.proportional`) whose own chance under the
      deals (:func:`~clusterednb.stats.permutation_moments.log_table_chance`) is rarer than
      :data:`~clusterednb.stats.column_tests.DESIGNED_Z` s.d. of a normal law below: that
      normal quantile, so the column is designed (the survey's columns: chances of 1e-134).
    """
    exact = pearson_z(by_task, offsets)
    z = np.where(exact > MOMENTS_CLEAR_Z, exact, np.nan)  # NaN compares False
    rarely = ndtri_exp(log_table_chance(by_task, offsets))  # as rare as z s.d. of a normal
    balanced = proportional(by_task, offsets) & (rarely < -DESIGNED_Z)
    z[balanced] = rarely[balanced]
    return z


def _dealt_heterogeneity(
    by_task: np.ndarray,
    offsets: np.ndarray,
    streams: ColumnStreams,
    beta: float,
    give_up: GiveUp = None,
) -> np.ndarray:
    """:func:`heterogeneity` of every column of ``by_task`` (U, V) by its deals (``streams``:
    one per column), shape (n_features,)."""
    task, value = entries_by_column(by_task, offsets)  # the tasks' places fixed
    feature = _feature_of(offsets)[value]
    shape, widths = by_task.shape, np.diff(offsets)
    bounds = np.searchsorted(feature, np.arange(widths.size + 1))
    scratch = np.empty(value.size, dtype=np.int64)

    def dealt(columns: np.ndarray) -> np.ndarray:
        at = entries_of(bounds, columns, widths.size)
        uniforms = streams.uniforms(columns, bounds)
        counts = dealt_counts(value[at], feature[at], uniforms, task[at], scratch, *shape)
        return group_split_evidence(counts, widths, beta)[columns]  # values dealt per column

    return above_draws(group_split_evidence(by_task, widths, beta), dealt, give_up)


def dependence(
    value_counts: np.ndarray,
    offsets: np.ndarray,
    ordinal: np.ndarray,
    rng: np.random.Generator | None,
    beta: float = 1.0,
) -> np.ndarray:
    """How far each column depends on the label within tasks beyond chance, in standard
    deviations, shape (n_features,): the log Bayes factor of a Dirichlet–categorical per
    (task, class) against one per task, or for an ``ordinal`` column with two classes
    ``Σ_u n_u r_u²`` (``r_u`` the correlation of the bin's position with the label over task
    ``u``'s counted values), against ``N_DRAWS`` shuffles of the labels among each task's
    values of each column (``rng`` None: seeded by each column's counts)."""
    n_tasks, n_classes, n_values = value_counts.shape
    task, label, value = np.nonzero(value_counts)
    repeats = value_counts[task, label, value].astype(np.int64)
    task, label, value = (np.repeat(a, repeats) for a in (task, label, value))
    feature = _feature_of(offsets)[value]
    block = feature * n_tasks + task  # by column, then task
    order = np.argsort(block, kind="stable")
    task, label, value, block = task[order], label[order], value[order], block[order]
    bounds = np.searchsorted(block, np.arange(offsets.size) * n_tasks)
    ordinal = np.asarray(ordinal, dtype=bool) & (n_classes == 2)
    widths = np.diff(offsets)
    streams = _streams(rng, value_counts, offsets, DEPENDENCE_SALT)

    def from_counts(counts: np.ndarray) -> np.ndarray:  # (U, C, V) → (F,)
        values = class_split_evidence(counts, widths, beta)
        if ordinal.any():
            values[ordinal] = ordinal_correlations(counts, offsets)[ordinal]
        return values

    def statistic(at: np.ndarray | slice, labels: np.ndarray) -> np.ndarray:
        cells = (task[at] * n_classes + labels) * n_values + value[at]
        counts = np.bincount(cells, minlength=value_counts.size).reshape(value_counts.shape)
        return from_counts(counts)

    place = task * n_values + value  # an entry's (task, value) stays; its label moves
    scratch = np.empty(label.size, dtype=np.int64)

    def shuffled(columns: np.ndarray) -> np.ndarray:  # labels shuffled per (column, task)
        at = entries_of(bounds, columns, widths.size)
        uniforms = streams.uniforms(columns, bounds)
        by_place = dealt_counts(
            label[at], block[at], uniforms, place[at], scratch, n_tasks * n_values, n_classes
        )  # (U·V, C)
        counts = by_place.reshape(n_tasks, n_values, n_classes).transpose(0, 2, 1)
        return from_counts(np.ascontiguousarray(counts))[columns]

    return above_draws(statistic(slice(None), label), shuffled)


def restricted(
    model: DirichletNB, counts: Counts | SparseCounts, free: np.ndarray
) -> tuple[DirichletNB, Counts | SparseCounts]:
    """``model`` and ``counts`` over the ``free`` columns only (bool, (n_features,)).

    Examples
    --------
    >>> from clusterednb.examples import models as toy
    >>> sub, sub_counts = restricted(toy.colour_model(), toy.three_task_counts(),
    ...                              np.array([True]))
    >>> sub.schema.n_values_total == toy.colour_model().schema.n_values_total
    True
    """
    schema = model.schema
    names = [n for n, keep in zip(schema.feature_names, free, strict=True) if keep]
    sub_schema = FeatureSchema(
        tuple(names),
        tuple(c for c, keep in zip(schema.categories, free, strict=True) if keep),
        schema.classes,
        {name: edges for name, edges in schema.bin_edges.items() if name in names},
    )
    values = free[schema.value_feature]
    sub_model = DirichletNB(sub_schema, alpha=model.alpha, beta=model.beta[:, values])
    if isinstance(counts, SparseCounts):  # class-major cells: each class's kept values
        n_classes = counts.label_counts.shape[1]
        cells = np.flatnonzero(np.tile(values, n_classes))  # n_values per class, in order
        return sub_model, SparseCounts(counts.label_counts, counts.cells[:, cells].tocsr())
    return sub_model, Counts(counts.label_counts, counts.value_counts[:, :, values])


def with_held_columns(
    result: ClusteringResult,
    model: DirichletNB,
    counts: Counts | SparseCounts,
    free: np.ndarray,
    prior: tuple[float, float] = (1.0, 1.0),
) -> ClusteringResult:
    """An engine's ``result`` on the ``free`` columns, completed over every column: each
    component predicts a held column from the counts pooled over every task, as a shared
    column is predicted, and the same for every class unless the held columns whose
    dependence on the label the pooled rows favour (:func:`~clusterednb.inference.relevance.
    shared_evidence`) are, judged together, likelier dependent
    (:func:`~clusterednb.inference.screen_release.most_probable_switches` under ``prior``, the
    Beta prior of the share: twenty noise columns' chance differences between the classes,
    multiplied together, would otherwise blur every prediction, and one in twenty has a
    factor above 1). The held columns' relevance is 0, and the log evidence adds their
    evidence when shared (the model in which they are known to be shared)."""
    value_feature = model.schema.value_feature
    values = free[value_feature]
    pooled = counts.total().value_counts[0].astype(np.float64)  # (C, V)
    log_shared, label_free_share = shared_evidence(model, pooled)
    with np.errstate(divide="ignore"):  # a share of 0 or 1: a factor of ±inf
        log_factor = np.log1p(-label_free_share) - np.log(label_free_share)
    dependent = np.zeros(free.size, dtype=bool)
    dependent[~free] = most_probable_switches(log_factor[~free], prior)
    label_free = ~dependent[value_feature]
    pooled[:, label_free] = pooled[:, label_free].sum(axis=0)
    posterior = result.posterior
    sub_counts = posterior.component_counts
    full = np.empty((sub_counts.shape[0], *pooled.shape))
    full[:, :, values] = sub_counts
    full[:, :, ~values] = pooled[:, ~values]
    relevance = np.zeros(free.size)
    relevance[free] = result.extras["feature_relevance"]
    held_evidence = log_shared[~free].sum()
    return replace(
        result,
        posterior=replace(posterior, component_counts=full),
        log_evidence=result.log_evidence + float(held_evidence),
        extras={**result.extras, "feature_relevance": relevance, "held_shared": ~free},
    )


def _within_budget(
    counts: Counts | SparseCounts, rng: np.random.Generator | None
) -> np.ndarray | None:
    """The value counts, shape (n_screened, n_classes, n_values_total), of a random subset of
    at most :data:`MAX_SCREENED_TASKS` tasks holding at most :data:`MAX_SCREENED_VALUES`
    counted values (all of them when they fit; at least two tasks, the two smallest when
    the subset drawn holds fewer); sparse counts are made dense for those tasks only. None
    where even the two smallest tasks hold more (a Bernoulli table of a vocabulary: every
    document counts a value of every word), checked before anything is allocated.

    Examples
    --------
    >>> counts = Counts(np.ones((5000, 2), dtype=np.int64), np.ones((5000, 2, 3), dtype=np.int64))
    >>> _within_budget(counts, np.random.default_rng(0)).shape
    (2000, 2, 3)
    >>> huge = Counts(np.ones((3, 2), dtype=np.int64), np.full((3, 2, 2), 10**6, dtype=np.int64))
    >>> _within_budget(huge, np.random.default_rng(0)) is None
    True
    """
    if isinstance(counts, SparseCounts):
        per_task = np.asarray(counts.cells.sum(axis=1)).ravel()
    else:
        per_task = counts.value_counts.reshape(counts.n_groups, -1).sum(axis=1)
    if per_task.sum() <= MAX_SCREENED_VALUES and per_task.size <= MAX_SCREENED_TASKS:
        return counts.take(np.arange(per_task.size)).value_counts
    if rng is None:  # the subset a function of the table
        rng = data_stream(SUBSET_SALT, per_task)
    order = rng.permutation(per_task.size)[:MAX_SCREENED_TASKS]
    within = np.cumsum(per_task[order]) <= MAX_SCREENED_VALUES
    if within.sum() >= 2:
        return counts.take(np.sort(order[within])).value_counts
    smallest = np.argsort(per_task, kind="stable")[:2]
    if per_task[smallest].sum() > MAX_SCREENED_VALUES:
        return None
    return counts.take(np.sort(smallest)).value_counts


def _feature_of(offsets: np.ndarray) -> np.ndarray:
    """The column of each flat value, shape (n_values_total,)."""
    return np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
