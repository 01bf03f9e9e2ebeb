"""``ClusteredLogisticRegression(relevance="auto")``, the default (issue 49): the columns are
judged, as with ``relevance=True``, only where a column's values are alike in every task;
elsewhere the fit is that of ``relevance=False``, to the last digit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import clusterednb
from clusterednb import ClusteredBoosting, ClusteredLogisticRegression
from clusterednb.estimation.decisions import AUTO_JUDGED, AUTO_NOT_JUDGED
from clusterednb.logistic.fit import JointData
from clusterednb.logistic.relevance_gate import (
    ALIKE_SHARE,
    columns_alike,
    likelihood_shares,
    resolved_relevance,
)
from clusterednb.logistic.settings import FitSettings
from clusterednb.seeding import side_stream


def _sites(seed: int, n_tasks: int = 16, n_rows: int = 30):
    """Tasks at four sites: ``site`` and ``hour`` differ between tasks; the label follows
    ``hour`` one way or the other by site."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(n_tasks), n_rows)
    site = task % 4
    hour = rng.normal(8.0 + 3.0 * site, 1.0)
    slope = np.where(site % 2, 1.5, -1.5)
    y = (rng.random(task.size) < 1 / (1 + np.exp(-slope * (hour - 8.0 - 3.0 * site)))).astype(int)
    X = pd.DataFrame({"site": np.array(list("nesw"))[site], "hour": hour})
    return X, y, task


def _noise_at(X: pd.DataFrame, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return X.assign(noise=rng.choice(list("pqrst"), len(X)), level=rng.normal(size=len(X)))


def test_columns_alike_finds_what_every_task_draws_alike_and_no_designed_column():
    rng = np.random.default_rng(0)
    task = np.repeat(np.arange(24), 12)
    differs = (task % 2) * 2 + rng.integers(0, 2, task.size)  # values 0–1 or 2–3 by task
    alike = rng.integers(0, 3, task.size)
    balanced = np.tile(np.arange(3), task.size // 3)  # every task holds each value 4 times
    codes = np.column_stack([differs, alike, balanced])
    data = JointData.from_codes(codes, rng.integers(0, 2, task.size), task, 24,
                                np.array([0, 4, 7, 10]))  # fmt: skip
    assert columns_alike(data, np.random.default_rng(1)).tolist() == [False, True, False]


def test_likelihood_shares_weigh_each_column_by_its_counts_times_their_entropy():
    """``n_f H_f`` (scipy's entropy of the column's frequencies, in nats) over its sum."""
    from scipy.stats import entropy

    by_task = np.array([[1, 2, 2, 2, 0, 5], [0, 1, 2, 1, 1, 0]])  # 3 columns of 2 values
    offsets = np.array([0, 2, 4, 6])
    counts = by_task.sum(axis=0).reshape(3, 2)
    information = counts.sum(axis=1) * entropy(counts, axis=1)
    np.testing.assert_allclose(
        likelihood_shares(by_task, offsets), information / information.sum(), rtol=1e-13
    )
    one_value = np.array([[3, 0], [2, 0]])
    assert likelihood_shares(one_value, np.array([0, 2])).tolist() == [0.0]


def _flags_beside_differing_columns(seed: int, rate: float):
    """Rows of 40 tasks: two columns whose values differ by task, and a flag set on a share
    ``rate`` of every task's rows alike (MovieLens' rare genres)."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(40), 30)
    first = (task % 4) * 2 + rng.integers(0, 2, task.size)  # values 0–1, 2–3, … by task
    second = (task % 3) * 3 + rng.integers(0, 3, task.size)
    flag = (rng.random(task.size) < rate).astype(int)
    codes = np.column_stack([first, second, flag])
    y = rng.integers(0, 2, task.size)
    return JointData.from_codes(codes, y, task, 40, np.array([0, 8, 17, 19]))


def test_alike_columns_that_hold_too_little_of_the_features_are_not_judged():
    """A flag set on 1 % of every task's rows is alike in every task, but beside columns
    that differ by task it holds about 1 % of the features' likelihood: "auto" does not
    judge. Set on half the rows it holds a fifth: judged."""
    rare = _flags_beside_differing_columns(0, 0.01)
    assert columns_alike(rare, np.random.default_rng(1)).tolist() == [False, False, True]
    shares = likelihood_shares(rare.value_counts, rare.offsets)
    assert shares[2] < ALIKE_SHARE
    assert not columns_alike(rare, np.random.default_rng(1), min_share=ALIKE_SHARE).any()
    assert resolved_relevance(FitSettings(relevance="auto"), rare, np.random.default_rng(0))\
        .relevance is False  # fmt: skip
    even = _flags_beside_differing_columns(0, 0.5)
    assert likelihood_shares(even.value_counts, even.offsets)[2] > ALIKE_SHARE
    assert resolved_relevance(FitSettings(relevance="auto"), even, np.random.default_rng(0))\
        .relevance is True  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_giving_up_on_the_deals_early_gives_the_answer_of_every_deal(seed):
    """The deals stop once the columns they have not told apart hold less than the share
    asked; the columns found alike are those of every deal, or none when they hold less."""
    rng = np.random.default_rng(seed)
    rate = rng.choice([0.005, 0.02, 0.1, 0.5])
    data = _flags_beside_differing_columns(seed, rate)
    shares = likelihood_shares(data.value_counts, data.offsets)
    for min_share in (0.01, ALIKE_SHARE, 0.2):
        every = columns_alike(data, np.random.default_rng(seed))
        expected = every if shares[every].sum() >= min_share else np.zeros_like(every)
        early = columns_alike(data, np.random.default_rng(seed), min_share=min_share)
        assert early.tolist() == expected.tolist(), (rate, min_share)


def test_auto_fits_as_relevance_false_where_the_alike_columns_hold_too_little():
    X, y, tasks = _sites(1)
    flag = np.random.default_rng(5).random(len(X)) < 0.01
    X = X.assign(flag=np.where(flag, "set", "unset"))
    auto = ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    plain = ClusteredLogisticRegression(relevance=False, random_state=0).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), plain.predict_proba(X, tasks))
    assert auto.fit_summary()["relevance"] == AUTO_NOT_JUDGED


def test_the_gate_leaves_the_fits_draws_as_they_were():
    """Deciding draws from a detached copy: the generator's next draws, and its next side
    stream, are those it would have given without the decision."""
    _, y, tasks = _sites(0)
    rng = np.random.default_rng(3)
    noise = np.random.default_rng(4).integers(0, 3, tasks.size)  # alike in every task
    data = JointData.from_codes(
        np.column_stack([tasks % 4, noise]), y, tasks, 16, np.array([0, 4, 7])
    )
    assert resolved_relevance(FitSettings(relevance="auto"), data, rng).relevance is True
    untouched = np.random.default_rng(3)
    assert side_stream(rng).random() == side_stream(untouched).random()
    assert rng.random() == untouched.random()


@pytest.mark.parametrize("given", [True, False])
def test_a_given_relevance_is_kept(given):
    data = JointData.from_codes(np.zeros((4, 1), int), np.array([0, 1, 0, 1]),
                                np.array([0, 0, 1, 1]), 2, np.array([0, 1]))  # fmt: skip
    settings = resolved_relevance(FitSettings(relevance=given), data, np.random.default_rng(0))
    assert settings.relevance is given


def test_auto_fits_as_relevance_false_where_every_column_differs_between_tasks(tmp_path):
    X, y, tasks = _sites(1)
    auto = ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    plain = ClusteredLogisticRegression(relevance=False, random_state=0).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), plain.predict_proba(X, tasks))
    assert not hasattr(auto, "feature_relevance_")
    assert auto.fit_summary()["relevance"] == AUTO_NOT_JUDGED
    auto.save(tmp_path / "m.cnb")
    loaded = clusterednb.load(tmp_path / "m.cnb")
    assert loaded.relevance == "auto"
    assert loaded.fit_summary()["relevance"] == AUTO_NOT_JUDGED


def test_auto_judges_as_relevance_true_where_a_column_is_alike_in_every_task(tmp_path):
    X, y, tasks = _sites(1)
    X = _noise_at(X, 2)
    auto = ClusteredLogisticRegression(random_state=0).fit(X, y, tasks)
    judged = ClusteredLogisticRegression(relevance=True, random_state=0).fit(X, y, tasks)
    np.testing.assert_array_equal(auto.predict_proba(X, tasks), judged.predict_proba(X, tasks))
    np.testing.assert_array_equal(auto.feature_relevance_, judged.feature_relevance_)
    summary = auto.fit_summary()
    assert summary["relevance"] == AUTO_JUDGED and "label_relevance" in summary
    auto.save(tmp_path / "m.cnb")
    loaded = clusterednb.load(tmp_path / "m.cnb")
    assert loaded.fit_summary()["relevance"] == AUTO_JUDGED
    more = _noise_at(_sites(2)[0], 3).iloc[:40]
    more_y, more_tasks = _sites(2)[1][:40], _sites(2)[2][:40]
    updated = loaded.partial_fit(more, more_y, more_tasks)  # judged as fitted: still judged
    again = judged.partial_fit(more, more_y, more_tasks)
    np.testing.assert_array_equal(updated.predict_proba(X, tasks), again.predict_proba(X, tasks))


def test_documents_are_fitted_without_judging():
    rng = np.random.default_rng(0)
    words = pd.DataFrame(rng.poisson(1.0, size=(60, 8)), columns=[f"w{i}" for i in range(8)])
    tasks, y = np.repeat(np.arange(6), 10), rng.integers(0, 2, 60)
    model = ClusteredLogisticRegression(observation="multinomial", random_state=0)
    model.fit(words, y, tasks)
    assert not hasattr(model, "feature_relevance_")


def test_the_booster_clusters_with_the_default():
    pytest.importorskip("lightgbm")
    X, y, tasks = _sites(1)
    X = _noise_at(X, 2)
    model = ClusteredBoosting({"n_estimators": 5}, random_state=0).fit(X, y, tasks)
    assert model.fit_summary()["relevance"] == AUTO_JUDGED


def test_above_its_tasks_the_gate_counts_a_drawn_subset_of_them(monkeypatch):
    """Above MAX_SCREENED_TASKS only the drawn tasks' rows are counted (no table of every
    task): a noise column is still found alike, a column that differs by task still not."""
    from clusterednb.logistic import relevance_gate

    monkeypatch.setattr(relevance_gate, "MAX_SCREENED_TASKS", 12)
    rng = np.random.default_rng(0)
    task = np.repeat(np.arange(40), 10)
    differs = (task % 2) * 2 + rng.integers(0, 2, task.size)
    codes = np.column_stack([differs, rng.integers(0, 3, task.size)])
    data = JointData.from_codes(codes, rng.integers(0, 2, task.size), task, 40,
                                np.array([0, 4, 7]))  # fmt: skip
    seen = []
    original = relevance_gate.heterogeneity

    def recording(value_counts, *args, **kwargs):
        seen.append(value_counts.shape)
        return original(value_counts, *args, **kwargs)

    monkeypatch.setattr(relevance_gate, "heterogeneity", recording)
    assert columns_alike(data, np.random.default_rng(1)).tolist() == [False, True]
    assert seen == [(12, 1, 7)]


def _opposite_slopes(seed: int) -> pd.DataFrame:
    """Issue 49's second population: 30 users in 3 groups whose labels follow two float
    columns with opposite slopes, 40 rows each (10 to train), and a uniform noise column."""
    rng = np.random.default_rng(seed)
    slopes = [(2.0, -2.0), (-2.0, 2.0), (2.0, 2.0)]
    frames = []
    for user in range(30):
        x1, x2, noise = rng.normal(size=40), rng.normal(size=40), rng.uniform(size=40)
        a, b = slopes[user % 3]
        y = (rng.random(40) < 1 / (1 + np.exp(-(a * x1 + b * x2)))).astype(int)
        frame = pd.DataFrame({"x1": x1, "x2": x2, "noise": noise, "y": y})
        frames.append(frame.assign(user=f"u{user}", train=np.arange(40) < 10))
    return pd.concat(frames, ignore_index=True)


def _test_auc(model, frame: pd.DataFrame, columns: list[str]) -> float:
    from sklearn.metrics import roc_auc_score

    train, test = frame[frame.train], frame[~frame.train]
    p1 = model.fit(train[columns], train.y, train.user).predict_proba(test[columns], test.user)
    test = test.assign(p1=p1[:, 1])
    return float(np.mean([roc_auc_score(g.y, g.p1) for _, g in test.groupby("user")]))


def test_the_issues_second_population_keeps_its_clean_auc_with_a_noise_column():
    """The issue measured 0.769 clean and 0.613 with one uniform noise column (every user
    merged into one cluster). With the default the noise column leaves the regressions, and
    over three tables the model keeps its clean AUC. Since the partition's score reads each
    number by its slope (2026-11-28) the groups are told apart far more often: clean 0.853 /
    0.862 / 0.812 on these tables (0.804 / 0.778 / 0.775 under the bins' score), with the
    noise column 0.824 / 0.842 / 0.871; so the comparison is of the means, not of one table."""
    clean, noisy = [], []
    for seed in range(3):
        frame = _opposite_slopes(seed)
        clean.append(_test_auc(ClusteredLogisticRegression(random_state=0), frame, ["x1", "x2"]))
        model = ClusteredLogisticRegression(random_state=0)
        noisy.append(_test_auc(model, frame, ["x1", "x2", "noise"]))
        assert list(model.columns_left_out_) == ["noise"]
    assert np.mean(noisy) > np.mean(clean) - 0.01, (noisy, clean)
    assert min(noisy) > 0.769 + 0.05, noisy  # above the issue's clean measurement
