"""The compiled assignment sweep draws what a plain sweep draws, through all its shortcuts.

The plain sweep here scores every cluster from the statistics' record with
``task_log_score`` (itself checked against the evidence in ``test_clustered``); the compiled
one scores from the side-by-side columns, takes per-count steps, skips bound tests when the
tables cover every count, reuses tied totals and scores the visited task's own cluster from
the record. Same uniforms, so the assignments must agree task by task.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from clusterednb import DirichletNB, FeatureSchema
from clusterednb.exceptions import DataError
from clusterednb.inference.gibbs.data import LogGammaTables
from clusterednb.inference.gibbs.engine import _distinct, fit_gibbs, fit_gibbs_sparse
from clusterednb.inference.gibbs.kernels import move_task, sample_index, task_log_score
from clusterednb.inference.gibbs.state import GibbsSettings, initial_state, prepare
from clusterednb.inference.gibbs.sweep_kernel import (
    STEPS,
    _fill_column,
    _new_columns,
    _score_columns,
    sweep_assignments,
    sweep_shortcuts,
)
from clusterednb.models.partition_prior import canonical_partition
from clusterednb.stats.counts import Counts

NO_ROWS = np.zeros((0, 4), dtype=np.int64)
NO_TASKS = np.zeros(0, dtype=np.int64)


def _data(rng, n_tasks, rows, missing, beta):
    schema = FeatureSchema(("a", "b", "c", "d"), tuple(tuple(range(3)) for _ in range(4)), (0, 1))
    group = rng.integers(0, 3, size=n_tasks)
    task = np.repeat(np.arange(n_tasks), rows)
    X = np.where(
        rng.random((task.size, 4)) < 0.3, group[task, None] % 3, rng.integers(0, 3, (task.size, 4))
    )
    X = np.where(rng.random(X.shape) < missing, -1, X)
    y = rng.integers(0, 2, size=task.size)
    counts = Counts.from_codes(X, y, task, n_tasks=n_tasks, n_classes=2, offsets=schema.offsets)
    model = DirichletNB(schema, beta=beta)
    data = prepare(model, counts, NO_ROWS, NO_TASKS)
    data.refresh(NO_TASKS)
    return data, group


def _plain_sweep(state, order, uniforms, log_gamma, data, tables):
    """Neal's algorithm 3 written plainly, with the kernel's slot bookkeeping."""
    assignment, sizes, active, _, _, counters = state.kernel_state()
    tasks = data.tasks.packed()
    cells, totals = state.cluster_cells, state.cluster_totals
    for task in order:
        old = assignment[task]
        if old >= 0:
            move_task(task, old, -1, tasks, cells, totals)
            sizes[old] -= 1
            if sizes[old] == 0:
                state.release_slot(old)
        n = counters[0]
        scores = np.empty(n + 1)
        for a in range(n):
            slot = active[a]
            scores[a] = np.log(sizes[slot]) + task_log_score(
                task, slot, tasks, cells, totals, tables
            )
        scores[n] = log_gamma + data.new_score[task]
        chosen = sample_index(scores, n + 1, uniforms[task])
        slot = state.take_free_slot() if chosen == n else active[chosen]
        move_task(task, slot, 1, tasks, cells, totals)
        sizes[slot] += 1
        assignment[task] = slot


@pytest.mark.parametrize(
    ("missing", "rows", "capped"),
    [(0.0, 8, False), (0.25, 8, False), (0.0, 30, True), (0.25, 30, True)],
)
def test_compiled_sweep_draws_what_a_plain_sweep_draws(missing, rows, capped):
    rng = np.random.default_rng(7)
    data, _ = _data(rng, 60, rows, missing, beta=0.7)
    if capped:  # tables shorter than the counts: the bound-tested path and lgamma fallbacks
        data.tables = LogGammaTables.build(data.cell_prior, data.total_prior, 5)
    tables = data.tables.packed()
    assert (data.tasks.cell_count > STEPS).any()
    start = rng.integers(0, 8, size=data.n_tasks)  # a poor start: many tasks must move
    compiled = initial_state(np.random.default_rng(1), data, 1.0, start)
    plain = initial_state(np.random.default_rng(1), data, 1.0, start)
    order = rng.permutation(data.n_tasks)
    moved = 0
    for _ in range(6):
        uniforms = rng.random(data.n_tasks)
        before = compiled.assignment.copy()
        sweep_assignments(
            compiled.kernel_state(),
            order,
            data.new_score,
            np.log(2.0),
            uniforms,
            data.tasks.packed(),
            compiled.cluster_cells,
            compiled.cluster_totals,
            tables,
            1.0,
        )
        _plain_sweep(plain, order, uniforms, np.log(2.0), data, tables)
        np.testing.assert_array_equal(compiled.assignment, plain.assignment)
        np.testing.assert_array_equal(compiled.cluster_cells, plain.cluster_cells)
        moved += int((before != compiled.assignment).sum())
    assert moved > 20  # tasks did move: the columns' upkeep was exercised


def test_shortcuts_see_coverage_and_ties():
    rng = np.random.default_rng(3)
    complete, group = _data(rng, 20, 6, 0.0, beta=1.0)
    holey, _ = _data(rng, 20, 6, 0.5, beta=1.0)
    for data, expect_ties in ((complete, True), (holey, False)):
        state = initial_state(rng, data, 1.0, group)
        covered, tied = sweep_shortcuts(
            np.arange(data.n_tasks),
            state.assignment,
            data.tasks.packed(),
            data.tables.packed(),
            state.cluster_cells,
            state.cluster_totals,
            state.active,
            state.n_clusters,
        )
        assert covered
        # Without missing values the four features of a class share their totals.
        assert tied.tolist() == ([False, True, True, True] * 2 if expect_ties else [False] * 8)
    short = LogGammaTables.build(complete.cell_prior, complete.total_prior, 5).packed()
    covered, _ = sweep_shortcuts(
        np.arange(complete.n_tasks),
        state.assignment,
        complete.tasks.packed(),
        short,
        state.cluster_cells,
        state.cluster_totals,
        state.active,
        state.n_clusters,
    )
    assert not covered


def test_slots_grow_as_clusters_open_and_draws_do_not_change():
    """A state with one cluster slot: the kernel stops when no slot is free, the state adds
    slots and the sweep resumes; the draws are those of a state with a slot per task."""
    rng = np.random.default_rng(11)
    data, _ = _data(rng, 50, 6, 0.1, beta=0.5)
    tables, tasks = data.tables.packed(), data.tasks.packed()
    roomy = initial_state(np.random.default_rng(2), data, 1.0)
    tight = dataclasses.replace(
        roomy,
        assignment=roomy.assignment.copy(),
        sizes=np.zeros(1, dtype=np.int64),
        active=np.zeros(1, dtype=np.int64),
        position=np.zeros(1, dtype=np.int64),
        free=np.zeros(1, dtype=np.int64),
        counters=np.array([0, 1]),
        cluster_cells=np.zeros((1, roomy.cluster_cells.shape[1]), dtype=np.int64),
        cluster_totals=np.zeros((1, roomy.cluster_totals.shape[1]), dtype=np.int64),
    )
    for _ in range(3):
        uniforms = rng.random(data.n_tasks)
        for state in (roomy, tight):
            state.sweep(data.all_tasks, data.new_score, np.log(20.0), uniforms, tasks, tables)
        np.testing.assert_array_equal(
            canonical_partition(roomy.assignment), canonical_partition(tight.assignment)
        )
    assert tight.n_clusters > 8  # a large gamma opened many clusters: the slots grew
    assert tight.capacity < data.n_tasks
    active = tight.active_slots()
    np.testing.assert_array_equal(
        np.sort(tight.sizes[active]), np.sort(roomy.sizes[roomy.active_slots()])
    )


def test_distinct_partitions_by_hashing_equal_numpy_unique():
    rng = np.random.default_rng(4)
    parts = [rng.integers(0, 3, 7) for _ in range(6)] * 3 + [
        rng.integers(0, 3, 7) for _ in range(5)
    ]
    unique, inverse, frequency = _distinct(parts)
    expected = np.unique(np.stack(parts), axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(unique, expected[0])
    np.testing.assert_array_equal(inverse, expected[1].ravel())
    np.testing.assert_array_equal(frequency, expected[2])


def test_sparse_input_fits_what_dense_counts_fit():
    rng = np.random.default_rng(5)
    data, _ = _data(rng, 40, 6, 0.1, beta=0.5)
    schema = data.model.schema
    dense = Counts(
        data.labelled_label_counts,
        data.labelled_cells.toarray().reshape(40, schema.n_classes, schema.n_values_total),
    )
    settings = GibbsSettings(n_sweeps=30, burn_in=10)
    by_dense = fit_gibbs(
        data.model, dense, NO_ROWS, NO_TASKS, 1.0, settings, np.random.default_rng(0)
    )
    by_sparse = fit_gibbs_sparse(
        data.model,
        data.labelled_cells,
        data.labelled_label_counts,
        1.0,
        settings,
        np.random.default_rng(0),
    )
    np.testing.assert_array_equal(by_dense.partitions, by_sparse.partitions)
    assert by_dense.log_evidence == pytest.approx(by_sparse.log_evidence, abs=1e-9)


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_column_scores_equal_record_scores_whatever_the_scratch_holds(missing):
    """Scores from the side-by-side columns equal ``task_log_score`` cluster by cluster,
    though the scratch array starts as NaN (it must never be read before it is written)."""
    rng = np.random.default_rng(8)
    data, _ = _data(rng, 30, 12, missing, beta=0.5)
    state = initial_state(rng, data, 1.0, rng.integers(0, 5, size=data.n_tasks))
    tasks, tables = data.tasks.packed(), data.tables.packed()
    n = state.n_clusters
    record = (state.cluster_cells, state.cluster_totals, tables[0], tables[2])
    columns = _new_columns(state.cluster_cells.shape[1], state.cluster_totals.shape[1], n)
    for a in range(n):
        _fill_column(a, state.active[a], record, columns)
    fast = sweep_shortcuts(
        data.all_tasks,
        state.assignment,
        tasks,
        tables,
        state.cluster_cells,
        state.cluster_totals,
        state.active,
        n,
    )
    for task in range(data.n_tasks):
        scores, scratch = np.full(n, np.nan), np.full(n, np.nan)
        _score_columns(task, n, tasks, tables, columns, scores, scratch, fast)
        expected = [
            task_log_score(task, slot, tasks, state.cluster_cells, state.cluster_totals, tables)
            for slot in state.active_slots()
        ]
        np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-9)


def test_sparse_fit_refuses_counts_that_do_not_fit_the_model():
    data, _ = _data(np.random.default_rng(0), 6, 4, 0.0, beta=1.0)
    cells, labels = data.labelled_cells, data.labelled_label_counts
    settings = GibbsSettings(n_sweeps=2, burn_in=0)
    rng = np.random.default_rng(0)
    with pytest.raises(DataError, match="do not fit the model"):
        fit_gibbs_sparse(data.model, cells[:, :-1], labels, 1.0, settings, rng)
    with pytest.raises(DataError, match="do not fit the model"):
        fit_gibbs_sparse(data.model, cells, labels[:-1], 1.0, settings, rng)
    with pytest.raises(DataError, match="no task"):
        fit_gibbs_sparse(data.model, cells[:0], labels[:0], 1.0, settings, rng)
