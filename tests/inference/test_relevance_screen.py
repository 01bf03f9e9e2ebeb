"""The screen before the relevance engines (issue 49): its statistics against brute force, its
shuffles against the margins they must keep, and what ``ClusteredNB(relevance=True)`` does
with the columns it holds shared."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import pearsonr

import clusterednb
from clusterednb import ClusteredNB
from clusterednb.inference import relevance_screen as screen
from clusterednb.inference import screen_draws as draws
from clusterednb.stats.column_tests import ordinal_correlations
from clusterednb.stats.counts import Counts

OFFSETS = np.array([0, 5, 8])


def _counts(codes, y, task, n_tasks, offsets=OFFSETS):
    return Counts.from_codes(
        codes, y, task, n_tasks=n_tasks, n_classes=2, offsets=offsets
    ).value_counts


def test_the_ordinal_statistic_is_the_sum_of_each_tasks_squared_correlation():
    rng = np.random.default_rng(2)
    task = np.repeat(np.arange(6), [7, 9, 5, 12, 3, 8])
    y = rng.integers(0, 2, task.size)
    codes = np.column_stack([rng.integers(0, 5, task.size), rng.integers(0, 3, task.size)])
    codes[rng.random(task.size) < 0.15, 0] = -1  # missing: not counted
    expected = np.zeros(2)
    for column in range(2):
        for u in range(6):
            rows = (task == u) & (codes[:, column] >= 0)
            x, labels = codes[rows, column], y[rows]
            if rows.sum() > 1 and np.ptp(x) > 0 and np.ptp(labels) > 0:
                expected[column] += rows.sum() * pearsonr(x, labels)[0] ** 2
    found = ordinal_correlations(_counts(codes, y, task, 6), OFFSETS)
    np.testing.assert_allclose(found, expected, rtol=1e-10, atol=1e-12)


def _recording(monkeypatch, name: str) -> list[np.ndarray]:
    """The counts each call of the screen's statistic ``name`` scores, in call order (the
    statistic itself still answers)."""
    seen, original = [], getattr(screen, name)

    def record(counts, widths, beta):
        seen.append(counts.copy())
        return original(counts, widths, beta)

    monkeypatch.setattr(screen, name, record)
    return seen


def test_each_deal_keeps_every_tasks_count_and_every_columns_values(monkeypatch):
    rng = np.random.default_rng(4)
    task = np.repeat(np.arange(8), 6)
    codes = np.column_stack([rng.integers(0, 5, 48), rng.integers(0, 3, 48)])
    y = rng.integers(0, 2, 48)
    by_task = _counts(codes, y, task, 8).sum(axis=1)
    seen = _recording(monkeypatch, "group_split_evidence")
    screen.heterogeneity(_counts(codes, y, task, 8), OFFSETS, np.random.default_rng(0))
    observed, *dealt = seen
    np.testing.assert_array_equal(observed, by_task)
    assert len(dealt) in (*(draws for draws, _ in draws.EARLY_STOPS), draws.N_DRAWS)
    assert any(not np.array_equal(d, by_task) for d in dealt)  # the deals move values
    for d in dealt:
        np.testing.assert_array_equal(d.sum(axis=0), by_task.sum(axis=0))  # each value's count
        for start, stop in itertools.pairwise(OFFSETS):  # each task's count
            np.testing.assert_array_equal(
                d[:, start:stop].sum(axis=1), by_task[:, start:stop].sum(axis=1)
            )


def test_each_shuffle_keeps_every_tasks_values_and_classes(monkeypatch):
    rng = np.random.default_rng(5)
    task = np.repeat(np.arange(8), 6)
    codes = np.column_stack([rng.integers(0, 5, 48), rng.integers(0, 3, 48)])
    y = rng.integers(0, 2, 48)
    counts = _counts(codes, y, task, 8)
    seen = _recording(monkeypatch, "class_split_evidence")
    screen.dependence(counts, OFFSETS, np.array([False, False]), np.random.default_rng(0))
    observed, *shuffled = seen
    np.testing.assert_array_equal(observed, counts)
    assert any(not np.array_equal(s, counts) for s in shuffled)
    for s in shuffled:
        np.testing.assert_array_equal(s.sum(axis=1), counts.sum(axis=1))  # task × value
        for start, stop in itertools.pairwise(OFFSETS):  # task × class
            np.testing.assert_array_equal(
                s[:, :, start:stop].sum(axis=2), counts[:, :, start:stop].sum(axis=2)
            )


def test_a_columns_verdict_does_not_depend_on_the_other_columns():
    """Noise columns added to a table leave the other columns' statistics exactly as they
    were (up to the sums' rounding): each column's shuffles come from its own stream
    (:class:`ColumnStreams`)."""
    rng = np.random.default_rng(6)
    task, y = np.repeat(np.arange(12), 10), rng.integers(0, 2, 120)
    signal = (y + rng.integers(0, 2, 120)) % 3  # follows the label, alike in every task
    noise = rng.integers(0, 4, (120, 3))
    small = _counts(signal[:, None], y, task, 12, np.array([0, 3]))
    wide_offsets = np.array([0, 3, 7, 11, 15])
    wide = _counts(np.column_stack([signal, noise]), y, task, 12, wide_offsets)
    for test in (
        screen.heterogeneity,
        lambda *a: screen.dependence(a[0], a[1], [False] * (a[1].size - 1), a[2]),
    ):
        alone = test(small, np.array([0, 3]), np.random.default_rng(0))
        among = test(wide, wide_offsets, np.random.default_rng(0))
        np.testing.assert_allclose(alone[0], among[0], rtol=1e-10)  # the same draws


def _population(seed: int, n_noise: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Sixty tasks of ten rows in three groups that differ only in how the label follows two
    numbers (drawn alike in every group), and ``n_noise`` numbers sharing one latent factor
    row by row (moving together from task to task by chance)."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(60), 10)
    signal = rng.normal(size=(600, 2))
    slopes = np.array([[3.0, -3.0], [-3.0, 3.0], [0.0, 3.0]])[task % 3]
    y = (rng.random(600) < expit((signal * slopes).sum(axis=1))).astype(int)
    latent = rng.normal(size=600)
    noise = 0.8 * latent[:, None] + 0.6 * rng.normal(size=(600, n_noise))
    columns = {"s0": signal[:, 0], "s1": signal[:, 1]}
    columns |= {f"noise{j}": noise[:, j] for j in range(n_noise)}
    return pd.DataFrame(columns), y, task


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_correlated_noise_is_held_shared_and_the_signals_are_judged(inference):
    X, y, task = _population(0, 12)
    model = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    model.fit(X, y, task)
    held = model.result_.extras["held_shared"]
    assert held[2:].all() and not held[:2].any(), held
    np.testing.assert_array_equal(model.feature_relevance_[2:], 0.0)
    assert (model.feature_relevance_[:2] > 0.5).all(), model.feature_relevance_
    # a held column predicts from the pooled counts, the same in every component, and the
    # same for both classes (a noise column: likelier label-free)
    component_counts = model.result_.posterior.component_counts
    values = held[model.schema_.value_feature]
    assert np.ptp(component_counts[:, :, values], axis=0).max() == 0
    assert np.ptp(component_counts[:, :, values], axis=1).max() == 0
    again = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    np.testing.assert_array_equal(
        again.fit(X, y, task).predict_proba(X, task), model.predict_proba(X, task)
    )  # same seed, same numbers


def test_what_the_screen_holds_nothing_of_is_fitted_as_without_it(monkeypatch):
    X, y, task = _population(1, 0)
    model = ClusteredNB(relevance=True, random_state=0, progress=False).fit(X, y, task)
    assert not model.result_.extras.get("held_shared", np.zeros(2, dtype=bool)).any()
    monkeypatch.setattr(screen, "SCREEN_Z", -np.inf)  # nothing held: the engine alone
    alone = ClusteredNB(relevance=True, random_state=0, progress=False).fit(X, y, task)
    np.testing.assert_array_equal(model.predict_proba(X, task), alone.predict_proba(X, task))


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_counts_kept_sparse_are_screened_and_judged_as_dense_ones(monkeypatch, inference):
    """Above a size the estimator keeps its counts sparse: the screen reads them without a
    dense table of every task, and the fit holds and predicts as the dense one."""
    from clusterednb.data import guards

    X, y, task = _population(0, 6)
    dense = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    dense.fit(X, y, task)
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)
    kept = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    kept.fit(X, y, task)
    assert type(kept.counts_).__name__ == "SparseCounts"
    assert dense.result_.extras["held_shared"][2:].all()  # the noise held: the sparse path
    np.testing.assert_array_equal(
        kept.result_.extras["held_shared"], dense.result_.extras["held_shared"]
    )
    np.testing.assert_allclose(
        kept.predict_proba(X, task), dense.predict_proba(X, task), rtol=0, atol=1e-9
    )


def test_gibbs_relevance_refuses_a_dense_table_too_large(monkeypatch):
    from clusterednb.data import guards
    from clusterednb.exceptions import CNBError
    from clusterednb.naive_bayes import engines

    X, y, task = _population(0, 2)
    monkeypatch.setattr(guards, "SPARSE_COUNT_BYTES", 0)
    monkeypatch.setattr(engines, "MAX_COUNT_BYTES", 1)
    with pytest.raises(CNBError, match="use inference='variational'"):
        ClusteredNB(relevance=True, random_state=0, progress=False).fit(X, y, task)


def _designed_survey(seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """150 people who each rate the same sixteen products (a full factorial of four
    two-valued attributes), in two groups that weigh the attributes differently, and one
    column drawn at random for each rating."""
    rng = np.random.default_rng(seed)
    design = np.array(np.meshgrid(*[[0, 1]] * 4, indexing="ij")).reshape(4, -1).T  # (16, 4)
    task = np.repeat(np.arange(150), len(design))
    rows = np.tile(design, (150, 1))
    weights = np.array([[3.0, -3.0, 1.0, 0.0], [-3.0, 3.0, 0.0, 1.0]])[task % 2]
    y = (rng.random(task.size) < expit(((rows - 0.5) * weights).sum(axis=1))).astype(int)
    X = pd.DataFrame({f"a{j}": rows[:, j].astype(str) for j in range(4)})
    X["drawn"] = rng.integers(0, 3, task.size).astype(str)
    return X, y, task


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_designed_columns_are_never_held_and_stay_relevant(inference, tmp_path):
    """Every person holds the same balanced values of a designed column, so the deals put it
    far below chance: the screen neither holds it nor lets the engine share it (its
    relevance is 1); the column drawn at random is screened as before."""
    X, y, task = _designed_survey(0)
    counts = Counts.from_codes(
        np.column_stack([X[c].astype(int) for c in X]),
        y,
        task,
        n_tasks=150,
        n_classes=2,
        offsets=np.array([0, 2, 4, 6, 8, 11]),
    )
    held, designed = screen.screened(
        counts, np.array([0, 2, 4, 6, 8, 11]), np.zeros(5, dtype=bool), np.random.default_rng(0)
    )
    assert designed.tolist() == [True, True, True, True, False]
    assert not held[:4].any()
    model = ClusteredNB(inference=inference, relevance=True, random_state=0, progress=False)
    model.fit(X, y, task)
    np.testing.assert_array_equal(model.feature_relevance_[:4], 1.0)
    assert model.result_.extras["designed"].tolist() == designed.tolist()
    assert model.fit_summary()["columns_designed"] == ["a0", "a1", "a2", "a3"]
    model.save(tmp_path / "model.cnb")
    loaded = clusterednb.load(tmp_path / "model.cnb")
    assert loaded.fit_summary()["columns_designed"] == ["a0", "a1", "a2", "a3"]
    assert np.isfinite(model.result_.log_evidence)
    proba = model.predict_proba(X, task)
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)


def test_a_forced_feature_is_relevant_in_every_sample_and_the_rest_as_before():
    """Forcing no feature leaves the sampler's numbers as they were; forcing one keeps it
    relevant in every retained sample (its shared evidence impossible)."""
    from clusterednb.examples import models as toy
    from clusterednb.inference.relevance import RelevanceSettings, fit_relevance_gibbs

    model, counts = toy.colour_model(), toy.three_task_counts()
    settings = RelevanceSettings(n_sweeps=30, burn_in=10)
    plain = fit_relevance_gibbs(model, counts, 1.0, settings, np.random.default_rng(0))
    none = fit_relevance_gibbs(
        model, counts, 1.0, settings, np.random.default_rng(0), np.array([False])
    )
    np.testing.assert_array_equal(
        plain.extras["feature_relevance"], none.extras["feature_relevance"]
    )
    forced = fit_relevance_gibbs(
        model, counts, 1.0, settings, np.random.default_rng(0), np.array([True])
    )
    np.testing.assert_array_equal(forced.extras["feature_relevance"], 1.0)


def _counted(observed, pattern):
    """:func:`draws.above_draws` of ``observed`` against draws that cycle through
    ``pattern`` (n_draws, F) row by row, column by column; with the columns asked each time."""
    asked, seen = [], np.zeros(observed.size, dtype=int)

    def draw(columns):
        asked.append(columns.tolist())
        values = pattern[seen[columns], columns]
        seen[columns] += 1
        return values

    return draws.above_draws(observed, draw), asked


def test_each_columns_test_stops_early_when_it_stands_clear_and_else_reads_every_draw():
    """A column 60 s.d. above its first 3 distinct draws is decided there, one 20 s.d. above
    its first 5 there, one 10 s.d. above its first 10 there; later draws shuffle only the
    undecided columns, and each column's answer is that against its own draws."""
    assert draws.EARLY_STOPS == ((3, 60.0), (5, 20.0), (10, 10.0))
    pattern = np.random.default_rng(0).normal(size=(draws.N_DRAWS, 4))
    # over 3 / 5 / 10 draws: 1398 / 614 / 647, 1.2 / 1.5 / 0.7, 49.5 / 43.7 / 48.6 and
    # 23.3 / 14.9 / 13.4 s.d.
    observed = np.array([500.0, 0.5, 40.0, 10.0])
    z, asked = _counted(observed, pattern)
    expected = [[0, 1, 2, 3]] * 3 + [[1, 2, 3]] * 2 + [[1, 3]] * 5 + [[1]] * (draws.N_DRAWS - 10)
    assert asked == expected, asked
    for column, n_draws in enumerate((3, draws.N_DRAWS, 5, 10)):
        null = pattern[:n_draws, column]
        assert z[column] == pytest.approx((observed[column] - null.mean()) / null.std())


def test_a_test_given_up_at_a_stop_leaves_its_decided_columns_as_they_were():
    """``give_up`` is asked at each early stop with the undecided columns; True ends the
    draws there: the columns decided keep their z, the undecided read NaN."""
    pattern = np.random.default_rng(0).normal(size=(draws.N_DRAWS, 4))
    observed = np.array([500.0, 0.5, 40.0, 10.0])  # as in the test above
    whole, _ = _counted(observed, pattern)
    offered, seen = [], np.zeros(4, dtype=int)

    def draw(columns):
        values = pattern[seen[columns], columns]
        seen[columns] += 1
        return values

    def give_up(undecided):
        offered.append(undecided.tolist())
        return len(offered) == 2  # at the second stop (5 draws)

    z = draws.above_draws(observed, draw, give_up)
    assert offered == [[1, 2, 3], [1, 3]]
    assert seen.tolist() == [3, 5, 5, 5]  # no draw after the stop
    assert z[[0, 2]].tolist() == whole[[0, 2]].tolist()
    assert np.isnan(z[[1, 3]]).all()


def test_draws_that_repeat_a_value_stop_nothing_early():
    """On a tiny table the statistic takes few values, and a few draws can agree by chance:
    then their spread says nothing, and the column reads every draw. Draws equal up to the
    last bits (the same table summed in another order: on 4 tasks of 3 rows, three deals gave
    -1.1666056598219736, the same and -1.1666056598219772) count as one value."""
    pattern = np.random.default_rng(1).normal(size=(draws.N_DRAWS, 2))
    pattern[2, 0] = pattern[1, 0] * (1 + 3e-15)  # column 0: a value repeated among the first 3
    z, asked = _counted(np.array([500.0, 500.0]), pattern)
    assert asked == [[0, 1]] * 3 + [[0]] * (draws.N_DRAWS - 3), asked
    null = pattern[:, 0]
    assert z[0] == pytest.approx((500.0 - null.mean()) / null.std())
    agreeing = np.full((draws.N_DRAWS, 1), -1.1666056598219736)
    agreeing[::2] = -1.1666056598219772  # every draw one value: no spread, nothing above chance
    z, asked = _counted(np.array([9.0]), agreeing)
    assert len(asked) == draws.N_DRAWS and z.tolist() == [0.0]


def test_a_table_too_large_to_screen_holds_nothing_and_allocates_nothing(monkeypatch):
    """Where even the two smallest tasks hold more counted values than the screen reads (a
    Bernoulli table of a vocabulary), nothing is held and no entry is built."""
    X, y, task = _population(0, 6)
    codes = np.column_stack([np.digitize(X[c], [-1, 0, 1]) for c in X])
    offsets = np.arange(codes.shape[1] + 1) * 4
    counts = Counts.from_codes(codes, y, task, n_tasks=60, n_classes=2, offsets=offsets)
    monkeypatch.setattr(screen, "MAX_SCREENED_VALUES", 10)
    monkeypatch.setattr(screen, "entries_by_column", lambda *_: pytest.fail("entries built"))
    held, designed = screen.screened(
        counts, offsets, np.ones(codes.shape[1], bool), np.random.default_rng(0)
    )
    assert not held.any() and not designed.any()


def test_without_a_generator_each_columns_verdict_is_a_function_of_its_own_counts():
    """``rng`` None (naive Bayes's engines): each column's deals and shuffles are seeded by its
    own counts, so its z is the same run after run, beside any other columns (up to the order
    of summing), and changes when its counts change."""
    rng = np.random.default_rng(5)
    task = np.repeat(np.arange(12), 8)
    y = rng.integers(0, 2, task.size)
    codes = np.column_stack([rng.integers(0, 5, task.size), rng.integers(0, 3, task.size)])
    both = _counts(codes, y, task, 12)
    first_alone = _counts(codes[:, :1], y, task, 12, offsets=OFFSETS[:2])
    ordinal = np.array([True, False])
    for test in (
        lambda counts, offsets: screen.heterogeneity(counts, offsets, None),
        lambda counts, offsets: screen.dependence(
            counts, offsets, ordinal[: offsets.size - 1], None
        ),
    ):
        z = test(both, OFFSETS)
        np.testing.assert_array_equal(test(both.copy(), OFFSETS), z)
        assert test(first_alone, OFFSETS[:2])[0] == pytest.approx(z[0], rel=1e-12)  # summed apart
        moved = codes.copy()
        moved[:4, 0] = (moved[:4, 0] + 1) % 5  # four values of column 0 changed
        z_moved = test(_counts(moved, y, task, 12), OFFSETS)
        assert z_moved[0] != z[0] and z_moved[1] == z[1]


def test_a_subset_of_tasks_drawn_without_a_generator_is_a_function_of_the_table(monkeypatch):
    """Above the screen's budget a subset of tasks is screened; without a generator (naive
    Bayes's engines) it is seeded by the tasks' totals: the same subset every time, and
    another for another table."""
    monkeypatch.setattr(screen, "MAX_SCREENED_VALUES", 40)
    rng = np.random.default_rng(6)
    by_task = rng.integers(0, 3, size=(30, 2, 4))
    counts = Counts(by_task.sum(axis=2), by_task)
    first, again = screen._within_budget(counts, None), screen._within_budget(counts, None)
    assert first.sum() <= 40 and first.shape[0] < 30
    np.testing.assert_array_equal(first, again)
    other = Counts(by_task[::-1].sum(axis=2), by_task[::-1].copy())
    assert not np.array_equal(screen._within_budget(other, None), first)


def _apart_and_alike(seed: int) -> np.ndarray:
    """Counts of 20 tasks × 40 rows: column 0's values set by the task's parity (they differ
    between tasks far beyond chance), column 1 drawn alike everywhere."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(20), 40)
    apart = (task % 2) * 3 + rng.integers(0, 2, task.size)
    codes = np.column_stack([apart, rng.integers(0, 3, task.size)])
    return _counts(codes, rng.integers(0, 2, task.size), task, 20)


def test_a_column_far_above_its_exact_moments_is_decided_without_a_deal(monkeypatch):
    """Column 0 stands more than ``MOMENTS_CLEAR_Z`` s.d. above the exact mean of its X² over
    deals: its z is that one, and only column 1 is dealt (the deals see one column), its z
    the same as when every column is dealt."""
    counts = _apart_and_alike(0)
    by_task = counts.sum(axis=1)
    exact = screen.pearson_z(by_task, OFFSETS)
    assert exact[0] > screen.MOMENTS_CLEAR_Z and exact[1] < screen.MOMENTS_CLEAR_Z
    original = screen.group_split_evidence
    scored = _recording(monkeypatch, "group_split_evidence")
    z = screen.heterogeneity(counts, OFFSETS, None)
    assert z[0] == exact[0]
    assert scored and all(table.shape[1] == 3 for table in scored)  # column 1's values alone
    monkeypatch.setattr(screen, "group_split_evidence", original)
    every_column = screen._dealt_heterogeneity(
        by_task, OFFSETS, screen._streams(None, counts, OFFSETS, screen.HETEROGENEITY_SALT), 1.0
    )
    assert z[1] == pytest.approx(every_column[1], rel=1e-12)  # the same deals, summed apart
    assert every_column[0] > screen.SCREEN_Z  # the deals would have kept it too


def test_a_table_whose_every_column_stands_clear_deals_nothing_and_draws_its_one_seed(
    monkeypatch,
):
    """Where the exact moments decide every column no entry is built, and a generator passed
    is drawn once all the same (what is drawn after it does not depend on the verdicts)."""
    counts = _apart_and_alike(1)[:, :, :5]  # column 0 only
    monkeypatch.setattr(screen, "entries_by_column", lambda *_: pytest.fail("entries built"))
    rng, twin = np.random.default_rng(3), np.random.default_rng(3)
    z = screen.heterogeneity(counts, OFFSETS[:2], rng)
    assert z[0] > screen.MOMENTS_CLEAR_Z
    twin.integers(2**63)
    assert rng.integers(2**63) == twin.integers(2**63)


def _leaning_table(seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """30 tasks × 12 rows: ``kept`` means the label one way in half the tasks and the other way
    in the rest; ``strong`` follows the label alike everywhere; twenty noise colours."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(30), 12)
    y = rng.integers(0, 2, task.size)
    kept = np.where(task % 2 == 0, y, 1 - y) * 2 + rng.integers(0, 2, task.size)
    columns = {"kept": kept, "strong": np.where(rng.random(task.size) < 0.8, y, 1 - y)}
    columns |= {f"noise{j}": rng.integers(0, 4, task.size) for j in range(20)}
    return pd.DataFrame(columns).astype(str), y, task


def _moves(model: ClusteredNB, X: pd.DataFrame, task: np.ndarray, column: str) -> bool:
    """Whether flipping ``column`` between "0" and "1" in four rows moves their prediction."""
    rows = X.iloc[:4].copy()
    base = model.predict_proba(rows, task[:4])
    rows[column] = np.where(rows[column] == "0", "1", "0")
    return not np.allclose(model.predict_proba(rows, task[:4]), base, atol=1e-12)


def test_held_columns_are_predicted_class_by_class_only_when_judged_so_together(monkeypatch):
    """The screen made to hold ``strong`` and the noise: a held column is predicted from the
    pooled counts, class by class only where the held columns judged together are likelier
    dependent on the label. ``strong`` (a factor beyond 10⁶) is; no noise column is, not even
    one whose own factor passes 1 (on this table, one of twenty)."""
    X, y, task = _leaning_table(2)
    engines = clusterednb.naive_bayes.engines
    held = np.array([False] + [True] * 21)
    monkeypatch.setattr(engines, "screened", lambda *_: (held, np.zeros_like(held)))
    model = ClusteredNB(random_state=0, progress=False).fit(X, y, task)
    pooled = model.counts_.total().value_counts[0].astype(np.float64)
    share = clusterednb.inference.relevance.shared_evidence(model.observation_, pooled)[1]
    assert share[1] < 1e-6 and (share[2:] < 0.5).any()  # alone, a noise column would lean

    assert _moves(model, X, task, "kept") and _moves(model, X, task, "strong")
    assert not any(_moves(model, X, task, f"noise{j}") for j in range(20))


def test_a_column_every_task_holds_alike_is_designed_by_its_tables_chance_without_a_deal(
    monkeypatch,
):
    """Every person of the survey rates the same sixteen products: each attribute's table of
    people × values is exactly what its margins expect (X² = 0), a table whose chance under
    deals is its own (here below 1e-100). Those columns are designed with that chance as
    their z (a normal quantile), and only the column drawn at random is dealt."""
    X, y, task = _designed_survey(0)
    codes = np.column_stack([X[c].astype(int) for c in X])
    offsets = np.array([0, 2, 4, 6, 8, 11])
    counts = _counts(codes, y, task, 150, offsets)
    scored = _recording(monkeypatch, "group_split_evidence")
    z = screen.heterogeneity(counts, offsets, None)
    chance = screen.log_table_chance(counts.sum(axis=1), offsets)[:4]
    assert (chance < np.log(1e-100)).all()
    np.testing.assert_allclose(z[:4], screen.ndtri_exp(chance))
    assert screen.designed(z).tolist() == [True] * 4 + [False]
    assert scored and all(table.shape[1] == 3 for table in scored)  # the drawn column's values


def test_the_prior_of_the_share_of_relevant_columns_decides_for_the_held_ones(monkeypatch):
    """``relevance_prior`` reaches the held columns' judgement: a prior that expects most
    columns to matter (Beta(50, 1)) lets the noise columns whose own factor passes 1 predict
    class by class, where the default holds them all alike."""
    X, y, task = _leaning_table(2)
    engines = clusterednb.naive_bayes.engines
    held = np.array([False] + [True] * 21)
    monkeypatch.setattr(engines, "screened", lambda *_: (held, np.zeros_like(held)))
    model = ClusteredNB(relevance_prior=(50.0, 1.0), random_state=0, progress=False)
    model.fit(X, y, task)
    pooled = model.counts_.total().value_counts[0].astype(np.float64)
    share = clusterednb.inference.relevance.shared_evidence(model.observation_, pooled)[1]
    leaning = [f"noise{j}" for j in range(20) if share[2 + j] < 0.5]
    assert leaning and all(_moves(model, X, task, column) for column in leaning)
